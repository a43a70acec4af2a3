// Where a child runs when the dbos backend is chosen: on a `flow worker` (through
// LaunchEnvironment.fleet), or here on the coordinator when what it needs lives only on this
// machine's disk. The local backend has no fleet, and every child runs here as it always has.
import { delegateWorkflowId } from "../../backends/names.ts";
import type { LaunchEnvironment, PreparedChild } from "./launch-types.ts";

/** The run's diagnostic code when the dbos backend keeps a child on the coordinator. */
export const RUNS_ON_COORDINATOR = "coordinator";

export type ChildPlacement =
  /** `reason`: why a child the dbos backend would send to a worker stays here (its diagnostic). */
  | { where: "here"; reason?: string }
  /** The fixed DBOS workflow ID, from the child's run ID: a retried enqueue returns the same child. */
  | { where: "fleet"; workflowId(runId: string): string };

/**
 * A workflow's agent() call keeps the ID its call index gives it (`<rootRunId>/agent/<i>`); a
 * delegation's child is `<runId>/delegate`. A worktree is on the coordinator's disk, and a child
 * that resumes a run (a delegation's or an agent() call's) continues a session kept there: both run
 * here, and their diagnostics say so.
 */
export function placeChild(prepared: PreparedChild, env: Pick<LaunchEnvironment, "fleet">, workflowChildId?: string): ChildPlacement {
  if (!env.fleet) return { where: "here" };
  if (prepared.worktree) return { where: "here", reason: "runs on the coordinator, not a worker: its worktree is on this machine's disk" };
  if (prepared.resume) {
    return { where: "here", reason: `runs on the coordinator, not a worker: it continues the session of run ${prepared.resume.runId}, kept on this machine` };
  }
  if (workflowChildId !== undefined) return { where: "fleet", workflowId: () => workflowChildId };
  return { where: "fleet", workflowId: delegateWorkflowId };
}
