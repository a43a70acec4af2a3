import { statSync } from "node:fs";
import {
  assertStrictReplayable,
  describeKey,
  findEntry,
  nearestKey,
  OccurrenceCounter,
  promptHash,
  readCassette,
  type Cassette,
  type CassetteEntry,
  type CassetteKey,
  type ReplayMode,
} from "./cassette.ts";
import { redactText } from "../runs/index.ts";
import { patchBytes } from "./cassette-changes.ts";
import type { ReplaySettings } from "./harness-settings.ts";
import { parseStructuredAnswer } from "./structured-answer.ts";
import type { ChildRequest, ChildResult, Harness } from "./types.ts";
import { stoppedResult } from "./outcomes.ts";
import { zeroUsage } from "./usage.ts";

interface LoadedCassette {
  cassette: Cassette;
  stamp: string;
}

// One process may replay many children from one cassette: read it once (again when it changes on
// disk), and count occurrences across every child that asks it.
const loaded = new Map<string, LoadedCassette>();
const counters = new Map<string, OccurrenceCounter>();

function stampOf(path: string): string {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}` : "absent";
}

/**
 * The cassette at `path`, parsed; configuration_invalid or harness_unavailable when unusable.
 * Strict replay also needs every entry's promptHash, which a hand-written entry may leave out.
 */
export function loadCassette(path: string, mode: ReplayMode = "loose"): Cassette {
  const stamp = stampOf(path);
  const cached = loaded.get(path);
  const cassette = cached && cached.stamp === stamp ? cached.cassette : readCassette(path);
  loaded.set(path, { cassette, stamp });
  if (mode === "strict") assertStrictReplayable(cassette, path);
  return cassette;
}

function counterFor(path: string): OccurrenceCounter {
  let counter = counters.get(path);
  if (!counter) counters.set(path, (counter = new OccurrenceCounter()));
  return counter;
}

/** The key a child is recorded and replayed under. Counting its occurrence is a side effect. */
export function keyFor(request: ChildRequest, counter: OccurrenceCounter): CassetteKey {
  return {
    agent: request.task.agent,
    // Cassettes are meant to be shared: a secret in a description never reaches one. Redaction is
    // deterministic, so recording and replaying compute the same key.
    description: redactText(request.task.description).text,
    occurrence: counter.next(request.task),
    promptHash: promptHash(request.prompt, request.outputSchema),
  };
}

function missing(cassette: Cassette, key: CassetteKey, settings: ReplaySettings): string {
  const nearest = nearestKey(cassette, key);
  const hint =
    nearest && nearest.agent === key.agent && nearest.description === key.description && nearest.occurrence === key.occurrence
      ? " Only the prompt differs: --replay-mode loose (flow.replay.mode) ignores prompts."
      : "";
  return `The cassette ${settings.cassette} has no answer for ${describeKey(key)} (${settings.mode} replay). Nearest recorded: ${nearest ? describeKey(nearest) : "none, the cassette is empty"}.${hint}`;
}

/** A recorded answer as this request wants it: parsed JSON under an outputSchema, else text. */
async function answerFor(entry: CassetteEntry, request: ChildRequest): Promise<{ ok: true; value: unknown; text: string } | { ok: false; message: string }> {
  const answer = entry.answer;
  const text = typeof answer === "string" ? answer : JSON.stringify(answer);
  if (!request.outputSchema) return { ok: true, value: text, text };
  const parsed = await parseStructuredAnswer(text, request.outputSchema, request.signal);
  return parsed.ok ? { ok: true, value: parsed.value, text } : parsed;
}

/**
 * A recorded child's changes, played into this child's worktree before it answers, so they become
 * its ref exactly as a live child's would. Never into a tree that is not the child's own worktree.
 */
async function replayChanges(entry: CassetteEntry, cassette: Cassette, request: ChildRequest, settings: ReplaySettings): Promise<string | undefined> {
  if (entry.changes === undefined) return undefined;
  const where = `The cassette ${settings.cassette} (line ${cassette.lines[cassette.entries.indexOf(entry)]}, ${describeKey(entry.key)})`;
  if (!request.worktree) {
    return `${where} carries changes, but this child is not isolated in a worktree: replay writes recorded changes only into a child's own worktree, never into your working tree. Give the child isolation: "worktree".`;
  }
  const applied = await request.worktree.apply(patchBytes(entry.changes));
  return applied.ok ? undefined : `${where} carries changes that do not apply to the child's worktree (nothing was written): ${applied.message}`;
}

async function replay(request: ChildRequest, settings: ReplaySettings): Promise<ChildResult> {
  const zero = zeroUsage();
  if (request.signal.aborted) return stoppedResult(request, zero);
  const cassette = loadCassette(settings.cassette, settings.mode);
  const key = keyFor(request, counterFor(settings.cassette));
  const entry = findEntry(cassette, key, settings.mode);
  if (!entry) {
    const message = missing(cassette, key, settings);
    request.onDiagnostic({ type: "error", message });
    return { outcome: "failed", error: { code: "failed", message }, usage: zero };
  }
  const usage = { ...zero, ...entry.usage };
  if (entry.source === "stub") request.onDiagnostic({ type: "stub", message: "replayed an answer the stub harness generated: no model said it" });
  const refused = await replayChanges(entry, cassette, request, settings);
  if (refused) {
    request.onDiagnostic({ type: "error", message: refused });
    return { outcome: "failed", error: { code: "failed", message: refused }, usage: zero };
  }
  request.onProgress({ usage, activity: "replayed" });
  if (entry.outcome !== "succeeded") {
    const message = entry.error?.message ?? `The recorded child ended ${entry.outcome}.`;
    return { outcome: entry.outcome, error: { code: entry.outcome, message }, usage };
  }
  const answer = await answerFor(entry, request);
  if (!answer.ok && request.signal.aborted) return stoppedResult(request, usage);
  if (!answer.ok) return { outcome: "failed", error: { code: "failed", message: answer.message }, usage };
  request.onOutput(answer.text);
  return { outcome: "succeeded", value: answer.value, usage };
}

/**
 * The replay harness: every child is answered from a cassette, deterministically, with no model
 * and no credentials. The workflow around it runs for real (sandbox, limits, journal).
 */
export function createReplayHarness(settings: ReplaySettings): Harness {
  return {
    name: "replay",
    async run(request) {
      return replay(request, settings);
    },
  };
}
