import type { RunView } from "../contract/run-schema.ts";
import type { RunStore } from "../runs/index.ts";
import { ResultOwnership } from "./ownership.ts";
import { backgroundLimit, Slots } from "./slots.ts";

/**
 * What pi-flow keeps for one Pi session across extension reloads: who owns background results,
 * the background runs to stop when the session ends, the slots they share, and who currently
 * delivers completion messages. A reload builds a new extension instance for the same session;
 * keeping this per session (not per instance) lets it take over the runs already going.
 */
export interface SessionFlowState {
  readonly ownership: ResultOwnership;
  readonly backgroundSlots: Slots;
  /** Live background runs of the session, with the store that can cancel them. */
  readonly background: Map<string, { runs: RunStore; settled: Promise<unknown> }>;
  /** Delivers one completion message; absent between a reload's shutdown and the new start. */
  publish?: (view: RunView) => void;
  /** Completions that settled while nobody could deliver them, sent when a publisher binds. */
  readonly undelivered: RunView[];
}

const KEY: unique symbol = Symbol.for("pi-flow.session-state") as never;

function states(): Map<string, SessionFlowState> {
  const holder = globalThis as typeof globalThis & { [KEY]?: Map<string, SessionFlowState> };
  holder[KEY] ??= new Map();
  return holder[KEY];
}

export function sessionFlowState(sessionId: string): SessionFlowState {
  let state = states().get(sessionId);
  if (!state) {
    state = {
      ownership: new ResultOwnership(),
      backgroundSlots: new Slots(backgroundLimit(process.env)),
      background: new Map(),
      undelivered: [],
    };
    states().set(sessionId, state);
  }
  return state;
}

export function forgetSessionFlowState(sessionId: string): void {
  states().delete(sessionId);
}

/** Sends a completion now, or keeps it for the next publisher. */
export function deliverCompletion(state: SessionFlowState, view: RunView): void {
  if (state.publish) state.publish(view);
  else state.undelivered.push(view);
}

/** A host (re)binds to its session: it delivers completions from now on, and those that waited. */
export function bindPublisher(state: SessionFlowState, publish: (view: RunView) => void): void {
  state.publish = publish;
  for (const view of state.undelivered.splice(0)) publish(view);
}
