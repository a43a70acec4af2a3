/**
 * Steers that cross machines: `external_runs steer` on the coordinator writes the message into
 * `pi_flow.steers`; the worker running the child takes it (once: the row is deleted in the same
 * statement, so no message outlives its delivery in the database) and queues it in the child's Pi
 * session, as a local steer is. A message not yet
 * taken waits for whichever worker runs the child, also after a takeover.
 */
import type { Client, Pool, PoolClient } from "pg";

type Queryable = Pick<Client | Pool | PoolClient, "query">;

export async function ensureSteersTable(db: Queryable): Promise<void> {
  await db.query(
    "CREATE TABLE IF NOT EXISTS pi_flow.steers (seq bigserial PRIMARY KEY, workflow_id text NOT NULL, message text NOT NULL, sent_at timestamptz NOT NULL DEFAULT now(), taken_at timestamptz)",
  );
  await db.query("CREATE INDEX IF NOT EXISTS steers_waiting ON pi_flow.steers (workflow_id) WHERE taken_at IS NULL");
}

export async function sendSteer(db: Queryable, workflowId: string, message: string): Promise<void> {
  await db.query("INSERT INTO pi_flow.steers (workflow_id, message) VALUES ($1, $2)", [workflowId, message]);
}

/** Takes the waiting messages of these children, oldest first: each is returned to one caller only. */
export async function takeSteers(db: Queryable, workflowIds: readonly string[]): Promise<{ workflowId: string; message: string }[]> {
  if (workflowIds.length === 0) return [];
  const { rows } = await db.query<{ seq: string; workflow_id: string; message: string }>(
    "DELETE FROM pi_flow.steers WHERE taken_at IS NULL AND workflow_id = ANY($1) RETURNING seq, workflow_id, message",
    [workflowIds],
  );
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map((row) => ({ workflowId: row.workflow_id, message: row.message }));
}
