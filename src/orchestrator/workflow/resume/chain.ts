import type { RunView } from "../../../contract/run-schema.ts";
import type { RunStore } from "../../../runs/index.ts";

/**
 * The first run of a workflow's resume chain, followed back through `resumedFrom`: the run whose
 * `agent()` children the dbos backend names (`<first>/agent/<i>`), so a resume of a resume finds
 * the children any run of the chain enqueued. Not the correlation ID: a nested workflow shares its
 * parent's, and its children would take the IDs of the parent's own. A run whose evidence is gone
 * ends the walk where it is known.
 */
export function firstOfChain(view: RunView, runs: Pick<RunStore, "view">): string {
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
