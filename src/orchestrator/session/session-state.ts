import type { RunView } from "../../contract/run-schema.ts";
import type { RunStore } from "../../runs/index.ts";
import { CompletionBatch, completionWindow, type BatchPublisher } from "./completion-batch.ts";
import { ResultOwnership } from "./ownership.ts";
import { backgroundLimit, backgroundQueueLimit, Slots } from "../child/index.ts";
import { processGlobal } from "../../../runtime/process-global.ts";

/**
 * What pi-flow keeps for one Pi session across extension reloads: who owns background results,
 * the background runs to stop when the session ends, the slots they share, and the batch of
 * completions on their way to the parent (with who currently sends it). A reload builds a new extension instance for the same session;
 * keeping this per session (not per instance) lets it take over the runs already going.
 */
export interface SessionFlowState {
  readonly ownership: ResultOwnership;
  readonly backgroundSlots: Slots;
  /**
   * Background workflows the session's model starts run as many at once as background children
   * may, in slots of their own: each is a sandbox and up to `concurrency` children, so without a
   * bound a burst of them multiplied both. A pool apart from the children's, so a workflow that
   * holds one never waits for a background child that waits for it.
   */
  readonly backgroundWorkflowSlots: Slots;
  /** Live background runs of the session, with the store that can cancel them. */
  readonly background: Map<string, { runs: RunStore; settled: Promise<unknown> }>;
  /** Completions on their way to the parent, one message per batch (see completion-batch.ts). */
  readonly completions: CompletionBatch;
}

function states(): Map<string, SessionFlowState> {
  return processGlobal("pi-flow.session-state", () => new Map<string, SessionFlowState>());
}

export function sessionFlowState(sessionId: string): SessionFlowState {
  let state = states().get(sessionId);
  if (!state) {
    const completions = new CompletionBatch(completionWindow(process.env));
    state = {
      // A notification's ownership is re-checked when its batch goes out, not when it is queued.
      ownership: new ResultOwnership((send) => completions.enqueue(send)),
      backgroundSlots: new Slots(backgroundLimit(process.env), backgroundQueueLimit(process.env)),
      backgroundWorkflowSlots: new Slots(backgroundLimit(process.env), backgroundQueueLimit(process.env)),
      background: new Map(),
      completions,
    };
    states().set(sessionId, state);
  }
  return state;
}

export function forgetSessionFlowState(sessionId: string): void {
  states().delete(sessionId);
}

/** A completion whose result no wait owns joins the batch going out. */
export function deliverCompletion(state: SessionFlowState, view: RunView): void {
  state.completions.deliver(view);
}

/** A host (re)binds to its session: it sends completion batches from now on, and those that waited. */
export function bindPublisher(state: SessionFlowState, publisher: BatchPublisher): void {
  state.completions.bind(publisher);
}
