import { appendFileSync, chmodSync, statSync, writeFileSync } from "node:fs";
import { printable, redactValue } from "../runs/index.ts";
import { formatLine, OccurrenceCounter, readCassette, recordedHeader, stubHeader, type CassetteEntry, type CassetteHeader } from "./cassette.ts";
import type { RecordSettings } from "./harness-settings.ts";
import { keyFor } from "./replay.ts";
import type { ChildRequest, Harness } from "./types.ts";
import { recordedChanges, type RecordedChanges } from "./cassette-changes.ts";

/** Starts a new cassette at `path`, replacing any file there: the header line only, readable by its owner only. */
export function startCassette(path: string, header: CassetteHeader = recordedHeader()): void {
  writeFileSync(path, formatLine(header), { mode: 0o600 });
  chmodSync(path, 0o600); // a file that was there keeps its mode through a rewrite
}

// Occurrences are counted per cassette across the process, exactly as replay counts them.
const counters = new Map<string, OccurrenceCounter>();

/** A cassette to append to: an absent or empty file gets a header; an existing one must be a cassette. */
function openForAppend(path: string, header: () => CassetteHeader): OccurrenceCounter {
  let counter = counters.get(path);
  if (counter) return counter;
  if ((statSync(path, { throwIfNoEntry: false })?.size ?? 0) === 0) startCassette(path, header());
  else readCassette(path); // throws configuration_invalid when the file is not a cassette
  counters.set(path, (counter = new OccurrenceCounter()));
  return counter;
}

/**
 * What a worktree child changed, read from its worktree before launch-child keeps them on its ref
 * and removes it. A patch that cannot be read leaves the entry without changes, and says so.
 */
async function changesOf(request: ChildRequest): Promise<RecordedChanges | undefined> {
  if (!request.worktree) return undefined;
  try {
    const patch = await request.worktree.changes();
    if (!patch) return undefined;
    const { changes, withheld } = recordedChanges(patch);
    for (const file of withheld) {
      request.onDiagnostic({ type: "error", message: `the cassette leaves out the binary file ${file}: its bytes hold a secret, which cannot be redacted without corrupting it` });
    }
    return changes;
  } catch (error) {
    request.onDiagnostic({ type: "error", message: `the cassette keeps no changes for this child: ${(error as Error).message}` });
    return undefined;
  }
}

/**
 * Wraps a harness so each child's answer is appended to a cassette as the child settles. Answers
 * are redacted as the run's own final is, so a replay hands the script what the recording did.
 * A model's answer is marked `source: "model"` with its usage and timing; the stub harness's is
 * marked `source: "stub"`, with neither: it is a skeleton for a person to edit into real answers.
 * A child isolated in a worktree that changed files also keeps its changes, as a git patch.
 */
export function withRecording(inner: Harness, settings: RecordSettings | undefined, stubSeed?: number): Harness {
  if (!settings) return inner;
  const stubbed = stubSeed !== undefined;
  return {
    name: inner.name,
    async run(request) {
      const counter = openForAppend(settings.cassette, () => (stubbed ? stubHeader(stubSeed) : recordedHeader()));
      const key = keyFor(request, counter);
      const started = Date.now();
      const result = await inner.run(request);
      if (result.outcome === "cancelled") return result;
      const changes = await changesOf(request);
      const entry: CassetteEntry = {
        key,
        outcome: result.outcome,
        ...(result.outcome === "succeeded" ? { answer: redactValue(result.value).value } : {}),
        ...(result.error ? { error: { code: result.error.code, message: printable(result.error.message) } } : {}),
        ...(stubbed
          ? { source: "stub" as const }
          : { usage: result.usage, timing: { startedAt: new Date(started).toISOString(), durationMs: Date.now() - started }, source: "model" as const }),
        ...(changes !== undefined ? { changes } : {}),
      };
      appendFileSync(settings.cassette, formatLine(entry));
      return result;
    },
  };
}
