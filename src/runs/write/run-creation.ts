import { rmSync } from "node:fs";
import { FlowError } from "../../contract/errors.ts";
import { AppendFile, ensureDir } from "../fsio.ts";
import { groupCommit } from "./group-commit.ts";
import { runFiles, runsDir, type RunScope } from "../home.ts";
import { newRunId } from "../ids.ts";
import { JOURNAL_VERSION, encodeLine, type JournalLine, type TaskIdentity } from "../journal/journal.ts";
import { redactedJson, redactValue } from "../redact/index.ts";
import { formatBytes } from "../user-file.ts";

/** The most a run's launch record (script, args, prompt, options…) may hold, as UTF-8 JSON. */
export const LAUNCH_MAX_BYTES = 64 * 1024 * 1024;
import { createRunDirectory } from "../read/run-index.ts";
import { describeError, RunFilesWriter } from "./run-files-writer.ts";
import type { CreateRunInput } from "./writer-types.ts";

export interface CreatedRun {
  runId: string;
  task: TaskIdentity;
  startedAt: string;
  writer: RunFilesWriter;
}

/** A workflow's child joins its parent's line of work when the parent's is known (the parent runs here). */
export function correlated(input: CreateRunInput, correlationOf: (runId: string) => string | undefined): CreateRunInput {
  const { parentRunId, correlationId } = input.task;
  const inherited = correlationId === undefined && parentRunId !== undefined ? correlationOf(parentRunId) : undefined;
  return inherited === undefined ? input : { ...input, task: { ...input.task, correlationId: inherited } };
}

/**
 * A new run's evidence: its directory and the journal with its start line, which carries the task
 * and the launch details, on disk when this returns (a run killed right after creation is found,
 * with its task and launch). That is two file-system entries; the record follows in the group
 * commit's next batch. Fails with `storage_unavailable`, leaving no half-created run behind.
 */
export function createRunEvidence(scope: RunScope, input: CreateRunInput): CreatedRun {
  const runId = newRunId(input.kind);
  const files = runFiles(scope, runId);
  // A run that continues no earlier line of work starts its own (never redacted: it is a run ID).
  const task = { ...(redactValue(input.task).value as TaskIdentity), correlationId: input.task.correlationId ?? runId };
  const startedAt = new Date().toISOString();
  // Serialised once: its size is measured on the very text the start line carries.
  const launchJson = redactedJson(input.launch ?? {}) ?? "{}";
  const launchBytes = Buffer.byteLength(launchJson, "utf8");
  if (launchBytes > LAUNCH_MAX_BYTES) {
    throw new FlowError("request_invalid", `The run's launch record would be ${launchBytes} bytes, over ${formatBytes(LAUNCH_MAX_BYTES)} (${LAUNCH_MAX_BYTES} bytes), the most one may hold.`);
  }
  try {
    createRunDirectory(runsDir(scope), runId, () => ensureDir(files.dir));
    const journal = new AppendFile(files.journal, { fresh: true });
    const start: JournalLine = {
      v: JOURNAL_VERSION,
      seq: 0,
      runId,
      at: startedAt,
      t: "start",
      kind: input.kind,
      task,
      background: input.background,
      // launchBytes right before launch, and launch last: the launch view is then a byte range of this line.
      launchBytes,
    };
    // The line as encodeLine writes it, with the launch's JSON placed last as it was measured.
    journal.append(`${encodeLine(start).slice(0, -2)},"launch":${launchJson}}\n`, false);
    groupCommit().enqueue("journal", files.journal);
    return { runId, task, startedAt, writer: new RunFilesWriter(files, journal) };
  } catch (error) {
    try {
      rmSync(files.dir, { recursive: true, force: true }); // leave no half-created run behind
    } catch {
      /* nothing was created */
    }
    throw new FlowError("storage_unavailable", `Could not write the run's journal: ${describeError(error)}`);
  }
}
