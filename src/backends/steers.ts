/**
 * Steers that cross machines: `external_runs steer` on the coordinator writes the message into
 * `pi_flow.steers`; the worker running the child takes it (once: the row is deleted in the same
 * statement, so no message outlives its delivery in the database) and queues it in the child's Pi
 * session, as a local steer is. A message not yet
 * taken waits for whichever worker runs the child, also after a takeover. A message the worker took
 * but could not hand to the child (it had just ended, or its harness takes no steers) goes back into
 * the table under its own number; whatever is left once the child's answer is in, the coordinator
 * takes and writes to the run's diagnostics as not delivered: no steer vanishes unsaid.
 */
import type { Client, Pool, PoolClient } from "pg";
import { savedSteers } from "./child-sessions.ts";

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

export interface TakenSteer {
  /** Its place in the order steers were sent; null for one put back without it (it goes last). */
  seq: string | null;
  workflowId: string;
  message: string;
}

/**
 * The steers a child has not read, as the database knows them, oldest first: those its worker
 * handed to the child's session that no turn has read yet (saved with its checkpoints), then those
 * no worker has taken. One query; nothing is taken.
 */
export async function unreadSteers(db: Queryable, workflowId: string): Promise<string[]> {
  const { rows } = await db.query<{ handed: boolean; text: string }>(
    `SELECT true AS handed, 0::bigint AS seq, messages AS text FROM pi_flow.child_session_steers WHERE workflow_id = $1
     UNION ALL SELECT false, seq, message FROM pi_flow.steers WHERE workflow_id = $1 AND taken_at IS NULL
     ORDER BY handed DESC, seq`,
    [workflowId],
  );
  return rows.flatMap((row) => (row.handed ? savedSteers(row.text) : [row.text]));
}

/** Takes the waiting messages of these children, oldest first: each is returned to one caller only. */
export async function takeSteers(db: Queryable, workflowIds: readonly string[]): Promise<TakenSteer[]> {
  if (workflowIds.length === 0) return [];
  const { rows } = await db.query<{ seq: string; workflow_id: string; message: string }>(
    "DELETE FROM pi_flow.steers WHERE taken_at IS NULL AND workflow_id = ANY($1) RETURNING seq, workflow_id, message",
    [workflowIds],
  );
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map((row) => ({ seq: row.seq, workflowId: row.workflow_id, message: row.message }));
}

/** Puts back steers taken but not handed to their child, in their old order, for the coordinator to report. */
export async function returnSteers(db: Queryable, steers: readonly TakenSteer[]): Promise<void> {
  if (steers.length === 0) return;
  await db.query(
    `INSERT INTO pi_flow.steers (seq, workflow_id, message)
     SELECT COALESCE(s, nextval(pg_get_serial_sequence('pi_flow.steers', 'seq'))), w, m FROM unnest($1::bigint[], $2::text[], $3::text[]) AS t(s, w, m)
     ON CONFLICT (seq) DO NOTHING`,
    [steers.map((steer) => steer.seq), steers.map((steer) => steer.workflowId), steers.map((steer) => steer.message)],
  );
}
