import { processGlobal } from "../../runtime/process-global.ts";
import { FlowError } from "../contract/errors.ts";
import type { RunStore } from "../runs/index.ts";

/**
 * The waits workflows' scripts are in (`tools.external_runs` wait), so that no script waits for a
 * run that cannot settle before the script itself does: its own run, the workflow whose foreground
 * `tools.external_workflow` call started it, or a workflow waiting on either. Such a wait (two
 * workflows waiting on each other included) hung both until their wall-time limits.
 */
interface WorkflowWait {
  targets: ReadonlySet<string>;
  mode: "all" | "any";
  /** A wait with timeoutMs returns by itself: it holds nobody for good. */
  timed: boolean;
}

/** The waits in progress, by the run of the workflow whose script waits. */
const waits = processGlobal("pi-flow.workflow-waits", () => new Map<string, WorkflowWait[]>());

/** Whether the wait cannot return while every run in `blocked` is unsettled. */
function heldBy(wait: WorkflowWait, blocked: ReadonlySet<string>): boolean {
  if (wait.timed) return false;
  const targets = [...wait.targets];
  return wait.mode === "all" ? targets.some((runId) => blocked.has(runId)) : targets.every((runId) => blocked.has(runId));
}

/** The workflow that waits on `runId` through the foreground tools.external_workflow call that started it. */
function foregroundCaller(runs: RunStore, runId: string): string | undefined {
  try {
    const view = runs.view(runId);
    return view.kind === "workflow" && !view.background ? view.task.parentRunId : undefined;
  } catch {
    return undefined; // pruned or unreadable: nothing known waits on it
  }
}

/** The runs that cannot settle before `own` does: it, its foreground callers, and every workflow a wait holds on one of them; each with why. */
function settlingAfter(runs: RunStore, own: string): Map<string, string> {
  const blocked = new Map<string, string>([[own, "this workflow's own run"]]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const runId of [...blocked.keys()]) {
      const caller = foregroundCaller(runs, runId);
      if (caller === undefined || blocked.has(caller)) continue;
      blocked.set(caller, `a workflow whose foreground tools.external_workflow call waits on ${runId}`);
      grew = true;
    }
    const held = new Set(blocked.keys());
    for (const [waiter, list] of waits) {
      const holding = list.find((wait) => heldBy(wait, held));
      if (blocked.has(waiter) || holding === undefined) continue;
      blocked.set(waiter, `a workflow whose wait waits on ${[...holding.targets].find((runId) => held.has(runId))}`);
      grew = true;
    }
  }
  return blocked;
}

/**
 * Enters a workflow's wait: refused (request_invalid) when a target cannot settle before the
 * calling workflow does, else recorded until the returned function is called. `own` is the calling
 * workflow's run; a wait outside a workflow holds no run and is not recorded.
 */
export function enterWorkflowWait(runs: RunStore, own: string | undefined, runIds: unknown, mode: "all" | "any", timed: boolean): () => void {
  if (own === undefined || !Array.isArray(runIds)) return () => undefined;
  const blocked = settlingAfter(runs, own);
  for (const runId of runIds) {
    const why = typeof runId === "string" ? blocked.get(runId) : undefined;
    if (why === undefined) continue;
    throw new FlowError("request_invalid", `wait names ${runId}, ${why}: it cannot settle while this script waits for it. Leave it out of runIds.`);
  }
  const wait: WorkflowWait = { targets: new Set(runIds.filter((runId): runId is string => typeof runId === "string")), mode, timed };
  waits.set(own, [...(waits.get(own) ?? []), wait]);
  return () => {
    const left = (waits.get(own) ?? []).filter((entry) => entry !== wait);
    if (left.length > 0) waits.set(own, left);
    else waits.delete(own);
  };
}
