import type { RunView } from "../../contract/run-schema.ts";
import { STUBBED } from "../../harnesses/index.ts";
import type { RunStore } from "../../runs/index.ts";

/**
 * Which settled runs the stub harness answered, read from their evidence so that every answer
 * handing a result over (a completion message, an `external_runs` wait) tells the same: a child
 * run on the `stub` harness, or a workflow whose root recorded the `stubbed` diagnostic when it
 * settled (some of its agent() children were stubbed).
 */

/**
 * The root writes that diagnostic at settle, followed at most by one error entry (its message
 * capped at 32 KiB characters): the log's last bytes hold it, however long the log grew before.
 */
const WORKFLOW_TAIL_BYTES = 256 * 1024;

function workflowStubbed(runs: RunStore, runId: string): boolean {
  let tail: string;
  try {
    tail = runs.inspectTail(runId, "diagnostics", WORKFLOW_TAIL_BYTES);
  } catch {
    return false; // pruned or unreadable: nothing to tell from
  }
  // Each entry is one line of JSON (`{…}` or `{…},`); the first line of a cut tail may be partial.
  return tail.split("\n").some((line) => {
    try {
      const entry = JSON.parse(line.replace(/,$/, "")) as { level?: unknown; code?: unknown };
      return entry.level === "warn" && entry.code === STUBBED;
    } catch {
      return false;
    }
  });
}

/** The IDs of the views whose runs the stub harness answered, in order. */
export function stubbedRunIds(runs: RunStore, views: readonly RunView[]): string[] {
  return views
    .filter((view) => (view.kind === "agent" ? view.task.harness === "stub" : workflowStubbed(runs, view.runId)))
    .map((view) => view.runId);
}

/** What a text handing these runs' results over says, so the model never takes them for a model's answers. */
export function stubbedRunsNote(runIds: readonly string[]): string {
  return `Warning (${STUBBED}): the stub harness answered ${runIds.join(", ")} (a workflow: some of its agent() children) with values generated from the outputSchema (or a text naming the call); no model said them.`;
}
