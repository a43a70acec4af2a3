import { FlowError } from "../contract/errors.ts";
import type { SteeringInbox } from "../harnesses/steering.ts";
import type { RunStore } from "../runs/index.ts";
import { SteerBudget } from "./steer-budget.ts";

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
}

interface Steerable {
  target: SteerTarget;
  budget: SteerBudget;
  /** The last steer was refused: further refusals until one is accepted are not noted again. */
  refusing: boolean;
}

export interface SteerPayload {
  runId: string;
  status: "queued";
  /** True when the child's session did not exist yet: the message is delivered when it starts. */
  held: boolean;
}

/** A steer is a message for a model, not a document. */
export const MAX_STEER_CHARS = 32_768;

const GLOBAL_KEY: unique symbol = Symbol.for("pi-flow.steer.targets") as never;

/** One table per process, like the run registry (an extension reload keeps live children steerable). */
function targets(): Map<string, Steerable> {
  const holder = globalThis as typeof globalThis & { [GLOBAL_KEY]?: Map<string, Steerable> };
  holder[GLOBAL_KEY] ??= new Map();
  return holder[GLOBAL_KEY];
}

/** Registers a launched child; the returned function removes it when the child settles. */
export function registerSteerTarget(runId: string, target: SteerTarget, budget = new SteerBudget()): () => void {
  targets().set(runId, { target, budget, refusing: false });
  return () => {
    target.inbox?.close();
    targets().delete(runId);
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
 * run_unavailable; queued (not started) and finished runs are run_not_live; a workflow is
 * request_invalid; a CLI child is harness_unavailable; a steer beyond the run's budget
 * (steer-budget.ts) is request_invalid, saying which bound it met. ok means queued, not acted on.
 */
export function steerRun(runs: RunStore, runId: unknown, message: unknown): SteerPayload {
  const text = checkMessage(message);
  const view = runs.view(runId);
  const id = view.runId;
  if (view.kind !== "agent") throw new FlowError("request_invalid", `steer targets an agent run; ${id} is a workflow.`);
  if (view.state.status === "done") {
    throw new FlowError("run_not_live", `Run ${id} has finished; continue it with external_delegate resume: "${id}" instead.`);
  }
  if (view.state.status === "queued") {
    throw new FlowError("run_not_live", `Run ${id} is queued for a background slot and has not started; steer it once it runs.`);
  }
  const steerable = targets().get(id);
  if (!view.live || !steerable) throw new FlowError("run_not_live", `Run ${id} has no live owner; it cannot be steered.`);
  const { target } = steerable;
  if (!target.inbox) {
    throw new FlowError(
      "harness_unavailable",
      `The ${target.harness} harness cannot be steered: its CLI runs one prompt non-interactively. Cancel the run and resume it with a new prompt instead.`,
    );
  }
  const refusal = steerable.budget.admit(id, text, target.inbox.unread);
  if (refusal !== undefined) {
    if (!steerable.refusing) target.refused(refusal);
    steerable.refusing = true;
    throw new FlowError("request_invalid", refusal);
  }
  const held = !target.inbox.attached;
  if (!target.inbox.send(text)) throw new FlowError("run_not_live", `Run ${id} is ending; it cannot be steered.`);
  steerable.refusing = false;
  target.record(text, held);
  return { runId: id, status: "queued", held };
}

