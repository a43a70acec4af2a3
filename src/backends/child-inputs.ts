/**
 * A child's request (its prompt, role, task and folder) crosses the database whole, in DBOS's
 * `workflow_input` row: the worker's child runs what it says, so it cannot be redacted as the run's
 * records are (a prompt whose secret was redacted would be another task). It is needed only until
 * the child ends, so it goes then: its coordinator deletes it once it has read the child's answer,
 * and a worker's sweep deletes those of every settled child (a coordinator killed before its read).
 * A coordinator's `--resume` that enqueues the child again writes it again, and deletes it again
 * once it has read the answer.
 */
import type { Client, Pool, PoolClient } from "pg";
import { CHILD_WORKFLOW } from "./names.ts";

type Queryable = Pick<Client | Pool | PoolClient, "query">;

/** A workflow DBOS will never run again: its request is of no more use. */
const SETTLED = "('SUCCESS', 'ERROR', 'CANCELLED', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED')";

/** Deletes the request of these children, those that have settled; one still queued or running keeps it. */
export async function deleteSettledInputs(db: Queryable, workflowIds?: readonly string[], dbosSchema = "dbos"): Promise<void> {
  await db.query(
    `DELETE FROM "${dbosSchema}".workflow_input i USING "${dbosSchema}".workflow_status w
     WHERE w.workflow_uuid = i.workflow_uuid AND w.name = $1 AND w.status IN ${SETTLED} AND ($2::text[] IS NULL OR i.workflow_uuid = ANY($2))`,
    [CHILD_WORKFLOW, workflowIds ?? null],
  );
}
