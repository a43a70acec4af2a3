import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FlowError } from "../../contract/errors.ts";
import { runFiles, type RunStore } from "../../runs/index.ts";

/**
 * Resuming a run: a new run that continues the conversation an earlier, settled agent run had.
 * pi continues a copy of the earlier child's Pi session (kept in that run's evidence); claude and
 * codex continue the CLI session the earlier run recorded (its `cli_session` diagnostic).
 */
export interface ResumeSource {
  runId: string;
  /** The earlier run's line of work, which the new run continues. */
  correlationId: string;
  harness: string;
  /** pi: the earlier child's session file, copied into the new run's own session. */
  piSessionFile?: string;
  /** claude/codex: the CLI session to continue. */
  cliSessionId?: string;
}

/** Harnesses that can continue an earlier run's conversation. */
const RESUMABLE = new Set(["pi", "claude", "codex"]);

/** Where the pi harness keeps a run's child session. */
export const childSessionFile = (runs: RunStore, runId: string): string => join(runFiles(runs.scope, runId).dir, "session.jsonl");

function piSessionFile(runs: RunStore, runId: string): string | undefined {
  const file = childSessionFile(runs, runId);
  return existsSync(file) ? file : undefined;
}

const SESSION_LINE = /^\S+ info \[cli_session\]: (\S+) session (\S+)$/gm;
/** run-on-fleet.ts writes it when a worker's answer arrives. */
const WORKER_LINE = /^\S+ info \[worker\]: ran on worker (.+)$/m;

function diagnosticsText(runs: RunStore, runId: string): string | undefined {
  try {
    return readFileSync(runFiles(runs.scope, runId).diagnostics, "utf8");
  } catch {
    return undefined;
  }
}

function cliSessionId(runs: RunStore, runId: string, harness: string): string | undefined {
  const text = diagnosticsText(runs, runId);
  if (text === undefined) return undefined;
  let found: string | undefined;
  for (const match of text.matchAll(SESSION_LINE)) if (match[1] === harness) found = match[2];
  return found;
}

/**
 * Checks a `resume` before launch, with no side effect. Unknown, pruned or foreign runs are
 * run_unavailable (the store says so); a live run is request_invalid (steer it instead); a run that
 * kept nothing to continue is request_invalid; a harness that cannot resume is harness_unavailable.
 */
export function resolveResume(runId: string, runs: RunStore): ResumeSource {
  const view = runs.view(runId);
  if (view.kind !== "agent") {
    throw new FlowError("request_invalid", `resume continues an agent run; ${view.runId} is a workflow.`);
  }
  if (view.live || view.state.status === "queued" || view.state.status === "running") {
    throw new FlowError(
      "request_invalid",
      `Run ${view.runId} is still live: steer it with external_runs ${JSON.stringify({ action: "steer", runIds: [view.runId], message: "…" })} instead of resuming it.`,
    );
  }
  const harness = view.task.harness ?? "pi";
  const correlationId = view.correlationId ?? view.runId;
  if (!RESUMABLE.has(harness)) throw new FlowError("harness_unavailable", `The ${harness} harness cannot resume a run.`);
  // A child a worker ran left its session (Pi's, or the CLI's) on that worker's machine.
  const worker = WORKER_LINE.exec(diagnosticsText(runs, view.runId) ?? "")?.[1];
  if (worker !== undefined) {
    throw new FlowError("request_invalid", `Run ${view.runId} ran on worker ${worker}, and its ${harness} session stayed on that machine: only a child that ran on this coordinator can be resumed.`);
  }
  if (harness === "pi") {
    const file = piSessionFile(runs, view.runId);
    if (file === undefined) throw nothingToResume(view.runId, "Pi session");
    return { runId: view.runId, correlationId, harness, piSessionFile: file };
  }
  const sessionId = cliSessionId(runs, view.runId, harness);
  if (sessionId === undefined) throw nothingToResume(view.runId, `${harness} session`);
  return { runId: view.runId, correlationId, harness, cliSessionId: sessionId };
}

const nothingToResume = (runId: string, what: string) =>
  new FlowError("request_invalid", `Run ${runId} kept no ${what} to resume: it ended before its child started.`);
