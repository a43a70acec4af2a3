/**
 * How a worker puts children back on the queue (its stop, its sweep of silent workers, its sweep of
 * children whose end DBOS did not record): a statement of pi-flow's own, not DBOS's resumeWorkflows.
 */
import type { Pool, PoolClient } from "pg";
import { CHILD_QUEUE } from "./names.ts";

/**
 * Puts back on the queue those of the children that are still PENDING under one of `workers`, as
 * DBOS's resumeWorkflows does, in one statement: a child cancelled (or taken by another worker)
 * since they were read stays as it is. DBOS's own resume would put a cancelled child back on the
 * queue too, and a worker would run it again. Returns the children put back.
 */
export async function requeueHeld(db: Pick<Pool | PoolClient, "query">, workflowIds: readonly string[], workers: readonly string[], dbosSchema = "dbos"): Promise<string[]> {
  if (workflowIds.length === 0) return [];
  const { rows } = await db.query<{ workflow_uuid: string }>(
    `UPDATE "${dbosSchema}".workflow_status SET status = 'ENQUEUED', owner_xid = NULL, queue_name = $3, recovery_attempts = 0,
       workflow_deadline_epoch_ms = NULL, deduplication_id = NULL, started_at_epoch_ms = NULL, completed_at = NULL,
       updated_at = (EXTRACT(EPOCH FROM now()) * 1000)::bigint
     WHERE workflow_uuid = ANY($1) AND status = 'PENDING' AND executor_id = ANY($2) RETURNING workflow_uuid`,
    [workflowIds, workers, CHILD_QUEUE],
  );
  return rows.map((row) => row.workflow_uuid);
}
