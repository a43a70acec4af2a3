import { lstatSync } from "node:fs";
import { join } from "node:path";
import { FlowError } from "../../contract/errors.ts";
import { readEvidenceText, readLaunch, runFiles, type RunStore } from "../../runs/index.ts";
import { SESSION_NOT_KEPT } from "../../backends/kept-session.ts";
import { isCliHarness, resumesInPlace } from "../../harnesses/index.ts";

/**
 * Resuming a run: a new run that continues the conversation an earlier, settled agent run had.
 * pi continues a copy of the earlier child's Pi session (kept in that run's evidence, also for a
 * child a worker ran); claude and codex continue the CLI session the earlier run recorded (its
 * `cli_session` diagnostic), which only a child that ran on this coordinator can.
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

/**
 * The run's Pi session file, when it holds something to continue. An empty one is a child killed
 * between the file's creation and its first write (ChildSessionFile writes the header and the
 * prompt in one write): it kept nothing, as a child that never made the file. Neither did anything
 * but a regular file in its place: a link planted there is not followed, since the continued
 * session appends to the file.
 */
function piSessionFile(runs: RunStore, runId: string): string | undefined {
  const file = childSessionFile(runs, runId);
  const stats = lstatSync(file, { throwIfNoEntry: false });
  return stats?.isFile() && stats.size > 0 ? file : undefined;
}

const SESSION_LINE = /^\S+ info \[cli_session\]: (\S+) session (\S+)$/gm;
/** run-on-fleet.ts writes it when a worker's answer arrives. */
const WORKER_LINE = /^\S+ info \[worker\]: ran on worker (.+)$/m;
/** run-on-fleet.ts writes it when a worker child's Pi session could not be kept here. */
const NOT_KEPT_LINE = new RegExp(`^\\S+ warn \\[${SESSION_NOT_KEPT}\\]: (.+)$`, "m");

function diagnosticsText(runs: RunStore, runId: string): string | undefined {
  try {
    return readEvidenceText(runFiles(runs.scope, runId).diagnostics);
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
export function resolveResume(runId: string, runs: RunStore, supervised = true): ResumeSource {
  // Where external_runs cannot serve the session (not saved to a file), the way to wait is a run's end.
  const waitFor = (id: string) =>
    supervised ? `wait for it with external_runs ${JSON.stringify({ action: "wait", runIds: [id] })}` : `wait until it ends (a background run's completion message says when)`;
  const view = runs.view(runId);
  if (view.kind !== "agent") {
    throw new FlowError("request_invalid", `resume continues an agent run; ${view.runId} is a workflow.`);
  }
  if (view.state.status === "queued") {
    // A steer would answer not_started: the one thing that helps is to let it run.
    throw new FlowError(
      "request_invalid",
      `Run ${view.runId} is still queued for a background slot and has not started: ${waitFor(view.runId)}, then resume it.`,
    );
  }
  const harness = view.task.harness ?? "pi";
  if ((view.live || view.state.status === "running") && isCliHarness(harness)) {
    // A CLI child runs one prompt non-interactively: a steer would answer unsupported.
    throw new FlowError(
      "request_invalid",
      `Run ${view.runId} is still running, and a ${harness} child cannot be steered: ${waitFor(view.runId)} (or cancel it), then resume it.`,
    );
  }
  if (view.live || view.state.status === "running") {
    throw new FlowError(
      "request_invalid",
      supervised
        ? `Run ${view.runId} is still live: steer it with external_runs ${JSON.stringify({ action: "steer", runIds: [view.runId], message: "…" })} instead of resuming it.`
        : `Run ${view.runId} is still live, and this session is not saved to a file, so external_runs cannot steer it: ${waitFor(view.runId)}, then resume it.`,
    );
  }
  const correlationId = view.correlationId ?? view.runId;
  if (!RESUMABLE.has(harness)) throw new FlowError("harness_unavailable", `The ${harness} harness cannot resume a run.`);
  const diagnostics = diagnosticsText(runs, view.runId) ?? "";
  const worker = WORKER_LINE.exec(diagnostics)?.[1];
  if (harness === "pi") {
    // A pi child a worker ran has its session kept here too, when the coordinator could (kept-session.ts).
    const file = piSessionFile(runs, view.runId);
    if (file !== undefined) return { runId: view.runId, correlationId, harness, piSessionFile: file };
    const notKept = NOT_KEPT_LINE.exec(diagnostics)?.[1];
    if (notKept !== undefined) throw new FlowError("request_invalid", `Run ${view.runId} cannot be resumed: ${notKept}.`);
    if (worker !== undefined) throw new FlowError("request_invalid", `Run ${view.runId} cannot be resumed: it ran on worker ${worker}, and this coordinator keeps no Pi session of it.`);
    throw nothingToResume(view.runId, "Pi session");
  }
  // A CLI's session stays on the machine of the worker that ran it.
  if (worker !== undefined) {
    throw new FlowError("request_invalid", `Run ${view.runId} ran on worker ${worker}, and its ${harness} session stayed on that machine: only a pi child, or a child that ran on this coordinator, can be resumed.`);
  }
  const sessionId = cliSessionId(runs, view.runId, harness);
  if (sessionId === undefined) throw nothingToResume(view.runId, `${harness} session`);
  if (resumesInPlace(harness)) assertNotBeingContinued(runs, view.runId, harness, correlationId, sessionId, waitFor);
  return { runId: view.runId, correlationId, harness, cliSessionId: sessionId };
}

/**
 * Refuses a resume of a CLI that continues its session in place (codex's `exec resume` has no fork)
 * while another live run, in this process or another one on this host, continues the same thread:
 * a resume of this run, or of another run of its line that continues that thread too (a resume of a
 * resume records the thread it continued). Refused here, before launch, as request_invalid; the
 * harness's claim (cli/resume-claims.ts) catches only what races past this check, as a failed run.
 * A resume shares its run's line of work, so only live runs of that line are read.
 */
function assertNotBeingContinued(runs: RunStore, runId: string, harness: string, correlationId: string, thread: string, waitFor: (runId: string) => string): void {
  for (const other of runs.listEvery()) {
    if (other.kind !== "agent" || other.runId === runId || other.task.harness !== harness || (other.correlationId ?? other.runId) !== correlationId) continue;
    if (!other.live && !runs.ownedElsewhere(other.runId)) continue;
    const resumed = readLaunch(runFiles(runs.scope, other.runId), other.runId)?.resume;
    if (typeof resumed !== "string" || (resumed !== runId && cliSessionId(runs, resumed, harness) !== thread)) continue;
    const what = resumed === runId ? "" : ` (a resume of run ${resumed})`;
    throw new FlowError(
      "request_invalid",
      `Run ${runId} is being resumed right now by run ${other.runId}${what}, which continues the same ${harness} thread in place: ${waitFor(other.runId)}, then resume ${other.runId}.`,
    );
  }
}

const nothingToResume = (runId: string, what: string) =>
  new FlowError("request_invalid", `Run ${runId} kept no ${what} to resume: it ended before its child started.`);
