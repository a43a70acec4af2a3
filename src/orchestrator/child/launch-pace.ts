import { setImmediate as nextCheckPhase } from "node:timers/promises";
import { processGlobal } from "../../../runtime/process-global.ts";

/**
 * Launches take turns, one per turn of the event loop. Creating a run writes its directory and
 * journal synchronously; a burst of launches started at once (many tool calls in one message, a
 * script's Promise.all) would otherwise run back to back in one turn and hold the host's timers,
 * I/O and UI until the last one. Each launch waits for the previous one's turn to pass first.
 */
interface Pace {
  tail: Promise<void>;
}

/** One chain per process, like the run registry: every session's launches share the loop. */
function pace(): Pace {
  return processGlobal("pi-flow.launch-pace", (): Pace => ({ tail: Promise.resolve() }));
}

/** Resolves in a turn of the event loop of its own, after every launch that asked before it. */
export function launchTurn(): Promise<void> {
  const state = pace();
  const turn = state.tail.then(() => nextCheckPhase());
  state.tail = turn;
  return turn;
}
