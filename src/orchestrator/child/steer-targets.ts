import { FlowError } from "../../contract/errors.ts";
import type { SteeringInbox } from "../../harnesses/index.ts";
import type { RunStore } from "../../runs/index.ts";
import { SteerBudget } from "./steer-budget.ts";
import { processGlobal } from "../../../runtime/process-global.ts";

/**
 * `external_runs steer`: a message for a running child, queued for its next model request. Each
 * live child registers here while it runs; pi children take steers, CLI children cannot (their
 * CLIs run one prompt non-interactively) and say so.
 */
export interface SteerTarget {
  harness: string;
  /** Undefined when the harness cannot be steered. */
  inbox: SteeringInbox | undefined;
  /** Journals the steer and writes it to the run's diagnostics, so inspect shows it. */
  record(message: string, held: boolean): void;
  /** Notes in the run's diagnostics that steers were refused, and why (once per run of refusals). */
  refused(reason: string): void;
  /** What the run waits for while it is queued, when not only a background slot: a dbos-backend child waits for a flow worker. */
  waitsFor?: string;
  /** Notes in the run's diagnostics the steers its child ended (or failed to start) without reading, and why. */
  undelivered(messages: readonly string[], why: string): void;
}

interface Steerable {
  target: SteerTarget;
  budget: SteerBudget;
  /** The last steer was refused: further refusals until one is accepted are not noted again. */
  refusing: boolean;
}

export interface SteerPayload {
  runId: string;
  /**
   * queued: the child will read it. terminal: the run had ended. unsupported: its harness has no
   * steering channel. refused: the run's steering budget is spent (reason says which bound).
   * not_started: a background run still waits for a slot, and only a running record is steered
   * (tool-calling contract §10.3). Only
   * queued delivers the message; the others are answers, not errors, since v1's codes keep their
   * meanings (run_not_live: no owner and unfinished; harness_unavailable: before launch) and the
   * message itself was well formed.
   */
  status: "queued" | "terminal" | "unsupported" | "refused" | "not_started";
  /** True when the child's session did not exist yet: the message is delivered when it starts. */
  held: boolean;
  /** refused: the bound the steer met and when steering works again; not_started: what the run waits for, when not only a background slot. */
  reason?: string;
}

/** A steer is a message for a model, not a document. */
export const MAX_STEER_CHARS = 32_768;

/** One table per process, like the run registry (an extension reload keeps live children steerable). */
function targets(): Map<string, Steerable> {
  return processGlobal("pi-flow.steer.targets", () => new Map<string, Steerable>());
}

/**
 * Registers a launched child; the returned function removes it when the child settles, told why a
 * steer it had not read stays unread (outcomes.ts `unreadBecause`: how the child ended).
 */
export function registerSteerTarget(runId: string, target: SteerTarget, budget = new SteerBudget()): (why: string) => void {
  targets().set(runId, { target, budget, refusing: false });
  return (why) => {
    target.inbox?.close();
    targets().delete(runId);
    // Answered queued, but the child's session ended (or never started) first: said, not dropped.
    if (target.inbox && target.inbox.undelivered.length > 0) target.undelivered(target.inbox.undelivered.splice(0), why);
  };
}

function checkMessage(message: unknown): string {
  if (typeof message !== "string" || message.trim() === "") throw new FlowError("request_invalid", "steer needs a non-empty message.");
  if (message.length > MAX_STEER_CHARS) throw new FlowError("request_invalid", `message is longer than ${MAX_STEER_CHARS} characters.`);
  if (message.includes("\u0000")) throw new FlowError("request_invalid", "message contains a NUL character.");
  return message;
}

/**
 * Queues a message for a running child of this session. Unknown or foreign runs are
 * run_unavailable; a workflow is request_invalid; a run queued for a background slot answers `not_started`, a
 * finished or ending run answers `terminal`, a CLI child `unsupported` and a steer beyond the run's
 * budget (steer-budget.ts) `refused` with the bound it met, delivering nothing. queued means queued, not acted on.
 * A fleet child's steer is answered once the database has it (or has said the child ended, `terminal`,
 * or refused the write, `refused`).
 */
export async function steerRun(runs: RunStore, runId: unknown, message: unknown): Promise<SteerPayload> {
  const text = checkMessage(message);
  const view = runs.view(runId);
  const id = view.runId;
  if (view.kind !== "agent") throw new FlowError("request_invalid", `steer targets an agent run; ${id} is a workflow.`);
  if (view.state.status === "done") return { runId: id, status: "terminal", held: false };
  if (view.state.status === "queued") {
    const waitsFor = targets().get(id)?.target.waitsFor;
    return { runId: id, status: "not_started", held: false, ...(waitsFor ? { reason: waitsFor } : {}) };
  }
  const steerable = targets().get(id);
  if (!view.live || !steerable) throw new FlowError("run_not_live", `Run ${id} has no live owner; it cannot be steered.`);
  const { target } = steerable;
  if (!target.inbox) return { runId: id, status: "unsupported", held: false };
  const refusal = steerable.budget.admit(id, text, target.inbox.unread);
  if (refusal !== undefined) {
    if (!steerable.refusing) target.refused(refusal);
    steerable.refusing = true;
    return { runId: id, status: "refused", held: false, reason: refusal };
  }
  const held = !target.inbox.attached;
  // The child's session already ended (the run settles a moment later), or, on the dbos backend,
  // the database holds its answer: nothing can read it. Said before any answer of queued.
  const offered = await target.inbox.offer(text);
  if (offered === "ended") return { runId: id, status: "terminal", held: false };
  // A run that settled while the database answered takes no more evidence (it noted what it had not read).
  const open = targets().get(id) === steerable;
  if (offered !== "queued") {
    if (!steerable.refusing && open) target.refused(offered.refused);
    steerable.refusing = true;
    return { runId: id, status: "refused", held: false, reason: offered.refused };
  }
  steerable.refusing = false;
  if (open) target.record(text, held);
  return { runId: id, status: "queued", held };
}

