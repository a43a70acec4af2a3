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
import { FlowError } from "../contract/errors.ts";
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

/**
 * Writes a steer for a child whose DBOS workflow has not ended, in one statement: false, with
 * nothing written, when it has (its answer is in, or its row is gone), so no steer is answered as
 * on its way to a child that can no longer read it.
 */
export async function sendSteerWhileRunning(db: Queryable, workflowId: string, message: string, dbosSchema = "dbos"): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO pi_flow.steers (workflow_id, message) SELECT $1, $2 WHERE EXISTS (
       SELECT 1 FROM "${dbosSchema}".workflow_status WHERE workflow_uuid = $1 AND status NOT IN ('SUCCESS', 'ERROR', 'CANCELLED', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED'))`,
    [workflowId, message],
  );
  return (rowCount ?? 0) > 0;
}

export interface TakenSteer {
  /** Its place in the order steers were sent; null for one put back without it (it goes last). */
  seq: string | null;
  workflowId: string;
  message: string;
}

/**
 * The most steer text one read takes from the database, per child: anyone who can write there can
 * forge a row of any size, and a read holds what it takes in memory (a coordinator reads a steered
 * child's every second). A child's unread steers are bounded at 256 KiB (steer-budget.ts), and
 * their saved copy (JSON) at most six times that, so real steers stay far below it.
 */
export const MAX_STEER_READ_BYTES = 4 * 1024 * 1024;

/** Why a child's steers were not read: the server measured them over `maxBytes`. */
function steersTooLarge(workflowId: string, bytes: number, maxBytes: number): FlowError {
  return new FlowError(
    "failed",
    `The steers waiting in the database for ${workflowId} come to ${bytes} bytes, over the ${maxBytes} bytes pi-flow reads at once: not read. Their rows stay in pi_flow.steers and pi_flow.child_session_steers, as they were written, for whoever looks into them.`,
  );
}

/**
 * The steers a child has not read, as the database knows them, oldest first: those its worker
 * handed to the child's session that no turn has read yet (saved with its checkpoints), then those
 * no worker has taken. One query, which the server answers with the rows only when they come to at
 * most `maxBytes` (else a failure naming the bound); nothing is taken.
 */
export async function unreadSteers(db: Queryable, workflowId: string, maxBytes = MAX_STEER_READ_BYTES): Promise<string[]> {
  const { rows } = await db.query<{ bytes: string; handed: boolean | null; text: string | null }>(
    `WITH waiting AS (
       SELECT true AS handed, 0::bigint AS seq, messages AS text FROM pi_flow.child_session_steers WHERE workflow_id = $1
       UNION ALL SELECT false, seq, message FROM pi_flow.steers WHERE workflow_id = $1 AND taken_at IS NULL
     ), size AS (SELECT COALESCE(sum(octet_length(text)), 0)::bigint AS bytes FROM waiting)
     SELECT size.bytes, w.handed, w.text FROM size LEFT JOIN waiting w ON size.bytes <= $2
     ORDER BY w.handed DESC, w.seq`,
    [workflowId, maxBytes],
  );
  const bytes = Number(rows[0]?.bytes ?? 0);
  if (bytes > maxBytes) throw steersTooLarge(workflowId, bytes, maxBytes);
  return rows.flatMap((row) => (row.text === null ? [] : row.handed ? savedSteers(row.text) : [row.text]));
}

/** What one take found: the steers taken, and the children whose waiting steers were too large to read (left as written). */
export interface SteersTake {
  taken: TakenSteer[];
  tooLarge: FlowError[];
}

/**
 * Takes the waiting messages of these children, oldest first: each is returned to one caller only.
 * `refusedToo`: also those a worker put back as refused (its child's harness takes none), which
 * only the coordinator takes, as undelivered.
 * A child's steers are taken whole or not at all, and one take reads at most `maxBytes`, as the
 * server measures them first: the steers of a child over it are left as written (and named in
 * `tooLarge`), those of children past the bound together wait for the next take.
 */
export async function takeSteers(db: Queryable, workflowIds: readonly string[], maxBytes = MAX_STEER_READ_BYTES, { refusedToo = false }: { refusedToo?: boolean } = {}): Promise<SteersTake> {
  if (workflowIds.length === 0) return { taken: [], tooLarge: [] };
  const { rows } = await db.query<{ seq: string | null; workflow_id: string; message: string | null; bytes: string | null }>(
    `WITH waiting AS (
       SELECT workflow_id, sum(octet_length(message))::bigint AS bytes, min(seq) AS first FROM pi_flow.steers
       WHERE (taken_at IS NULL OR $3) AND workflow_id = ANY($1) GROUP BY workflow_id
     ), fitting AS (
       SELECT workflow_id FROM (SELECT workflow_id, sum(bytes) OVER (ORDER BY first) AS upto FROM waiting WHERE bytes <= $2) f WHERE upto <= $2
     ), taken AS (
       DELETE FROM pi_flow.steers s USING fitting f WHERE s.workflow_id = f.workflow_id AND (s.taken_at IS NULL OR $3) RETURNING s.seq, s.workflow_id, s.message
     )
     SELECT seq, workflow_id, message, NULL::bigint AS bytes FROM taken
     UNION ALL SELECT NULL, workflow_id, NULL, bytes FROM waiting WHERE bytes > $2`,
    [workflowIds, maxBytes, refusedToo],
  );
  const taken = rows
    .filter((row): row is typeof row & { seq: string; message: string } => row.seq !== null && row.message !== null)
    .sort((a, b) => Number(a.seq) - Number(b.seq))
    .map((row) => ({ seq: row.seq, workflowId: row.workflow_id, message: row.message }));
  const tooLarge = rows.filter((row) => row.bytes !== null).map((row) => steersTooLarge(row.workflow_id, Number(row.bytes), maxBytes));
  return { taken, tooLarge };
}

/**
 * Puts back steers taken but not handed to their child, in their old order, for the coordinator to
 * report. `refused`: the child's harness takes no steers, so they are marked taken (`taken_at`) and
 * no worker takes them again; only the coordinator's take of undelivered steers does.
 */
export async function returnSteers(db: Queryable, steers: readonly TakenSteer[], { refused = false }: { refused?: boolean } = {}): Promise<void> {
  if (steers.length === 0) return;
  await db.query(
    `INSERT INTO pi_flow.steers (seq, workflow_id, message, taken_at)
     SELECT COALESCE(s, nextval(pg_get_serial_sequence('pi_flow.steers', 'seq'))), w, m, CASE WHEN $4 THEN now() END FROM unnest($1::bigint[], $2::text[], $3::text[]) AS t(s, w, m)
     ON CONFLICT (seq) DO NOTHING`,
    [steers.map((steer) => steer.seq), steers.map((steer) => steer.workflowId), steers.map((steer) => steer.message), refused],
  );
}
