import type { RunView } from "../../../contract/run-schema.ts";
import type { RunStore } from "../../../runs/index.ts";

/**
 * The first run of a workflow's resume chain, followed back through `resumedFrom`: the run whose
 * `agent()` children the dbos backend names (`<first>/agent/<i>`), so a resume of a resume finds
 * the children any run of the chain enqueued. Not the correlation ID: a nested workflow shares its
 * parent's, and its children would take the IDs of the parent's own. A run whose evidence is gone
 * ends the walk where it is known. A top-level workflow needs no walk (below).
 */
export function firstOfChain(view: RunView, runs: Pick<RunStore, "view">): string {
  // A top-level workflow's line of work is its chain: its correlation ID is the first run's, kept
  // by every resume, even when an earlier run of the chain belongs to another session (each
  // `flow run --resume` is a session of its own, whose store cannot view the runs of the others).
  if (view.task.parentRunId === undefined && view.correlationId !== undefined && view.correlationId !== view.runId) return view.correlationId;
  let first = view.runId;
  const seen = new Set([first]);
  for (let earlier = view.task.resumedFrom; earlier !== undefined && !seen.has(earlier); ) {
    first = earlier;
    seen.add(earlier);
    try {
      earlier = runs.view(earlier).task.resumedFrom;
    } catch {
      break;
    }
  }
  return first;
}
