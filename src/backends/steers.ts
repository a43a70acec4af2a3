/**
 * Steers that cross machines: `external_runs steer` on the coordinator writes the message into
 * `pi_flow.steers`; the worker running the child takes it (marks it `taken_by` its instance, so it
 * takes it once) and queues it in the child's Pi session, as a local steer is. The row goes only in
 * the statement that saves the steer beside the child's session (child-sessions.ts), or as the child
 * ends: a worker killed between take and save leaves it in the table, where the worker that takes
 * the child over takes it again, or its coordinator reports it. A message not yet taken waits for
 * whichever worker runs the child, also after a takeover. A message the worker took but could not
 * hand to the child (it had just ended, or its harness takes no steers) is let go in place;
 * whatever is left once the child's answer is in, the coordinator takes and writes to the run's
 * diagnostics as not delivered: no steer vanishes unsaid.
 */
import type { Client, Pool, PoolClient } from "pg";
import { FlowError } from "../contract/errors.ts";
import { redactText } from "../runs/index.ts";
import { savedSteers } from "./child-sessions.ts";

type Queryable = Pick<Client | Pool | PoolClient, "query">;

export async function ensureSteersTable(db: Queryable): Promise<void> {
  await db.query(
    "CREATE TABLE IF NOT EXISTS pi_flow.steers (seq bigserial PRIMARY KEY, workflow_id text NOT NULL, message text NOT NULL, sent_at timestamptz NOT NULL DEFAULT now(), taken_at timestamptz)",
  );
  // The worker instance that handed the steer to its child and has not saved it beside the session yet.
  await db.query("ALTER TABLE pi_flow.steers ADD COLUMN IF NOT EXISTS taken_by text");
  await db.query("CREATE INDEX IF NOT EXISTS steers_waiting ON pi_flow.steers (workflow_id) WHERE taken_at IS NULL");
}

/**
 * A steer as it goes into the database: redacted as the run's journal records it. The database is
 * not the run's store (anyone who can read it reads it, and a row lives until the child reads it),
 * so a secret pasted into a steer does not reach it, nor the worker's child (docs/scale.md).
 */
export const storedSteer = (message: string): string => redactText(message).text;

export async function sendSteer(db: Queryable, workflowId: string, message: string): Promise<void> {
  await db.query("INSERT INTO pi_flow.steers (workflow_id, message) VALUES ($1, $2)", [workflowId, storedSteer(message)]);
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
    [workflowId, storedSteer(message)],
  );
  return (rowCount ?? 0) > 0;
}

export interface TakenSteer {
  /** Its row's number: its place in the order steers were sent. */
  seq: string;
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

/** A worker taking the steers of the children it runs: its name (their DBOS executor) and its process's instance. */
export interface SteerTaker {
  worker: string;
  instance: string;
}

/**
 * Takes the waiting messages of these children, oldest first: each is returned to one caller only.
 * The coordinator's take (no `taker`) deletes them, or with `readOnly` only reads them (its take of
 * undelivered steers deletes them once it has noted them: `deleteSteers`); `refusedToo` also takes those a worker let go
 * as refused (its child's harness takes none), and those a worker took and did not save (it died).
 * A worker's take keeps them, marked `taken_by` its instance, until the save beside the child's
 * session deletes them (child-sessions.ts) or the child ends (`settleSteers`): it takes only the
 * steers of children DBOS has it run, so a worker taken for dead that is alive still takes none,
 * and those another instance took and did not save (it died, or stopped) it takes again.
 * A child's steers are taken whole or not at all, and one take reads at most `maxBytes`, as the
 * server measures them first: the steers of a child over it are left as written (and named in
 * `tooLarge`), those of children past the bound together wait for the next take.
 */
export async function takeSteers(
  db: Queryable,
  workflowIds: readonly string[],
  maxBytes = MAX_STEER_READ_BYTES,
  { refusedToo = false, taker, readOnly = false, dbosSchema = "dbos" }: { refusedToo?: boolean; taker?: SteerTaker; readOnly?: boolean; dbosSchema?: string } = {},
): Promise<SteersTake> {
  if (workflowIds.length === 0) return { taken: [], tooLarge: [] };
  const takeable = `(s.taken_at IS NULL OR $3) AND ($4::text IS NULL OR (s.taken_by IS DISTINCT FROM $4
    AND NOT EXISTS (SELECT 1 FROM "${dbosSchema}".workflow_status w WHERE w.workflow_uuid = s.workflow_id AND w.executor_id <> $5)))`;
  const take = taker
    ? `UPDATE pi_flow.steers s SET taken_by = $4 FROM fitting f WHERE s.workflow_id = f.workflow_id AND ${takeable} RETURNING s.seq, s.workflow_id, s.message`
    : readOnly
      ? `SELECT s.seq, s.workflow_id, s.message FROM pi_flow.steers s JOIN fitting f ON s.workflow_id = f.workflow_id WHERE ${takeable}`
      : `DELETE FROM pi_flow.steers s USING fitting f WHERE s.workflow_id = f.workflow_id AND ${takeable} RETURNING s.seq, s.workflow_id, s.message`;
  const { rows } = await db.query<{ seq: string | null; workflow_id: string; message: string | null; bytes: string | null }>(
    `WITH waiting AS (
       SELECT workflow_id, sum(octet_length(message))::bigint AS bytes, min(seq) AS first FROM pi_flow.steers s
       WHERE ${takeable} AND workflow_id = ANY($1) GROUP BY workflow_id
     ), fitting AS (
       SELECT workflow_id FROM (SELECT workflow_id, sum(bytes) OVER (ORDER BY first) AS upto FROM waiting WHERE bytes <= $2) f WHERE upto <= $2
     ), taken AS (${take})
     SELECT seq, workflow_id, message, NULL::bigint AS bytes FROM taken
     UNION ALL SELECT NULL, workflow_id, NULL, bytes FROM waiting WHERE bytes > $2`,
    [workflowIds, maxBytes, refusedToo, taker?.instance ?? null, taker?.worker ?? null],
  );
  const taken = rows
    .filter((row): row is typeof row & { seq: string; message: string } => row.seq !== null && row.message !== null)
    .sort((a, b) => Number(a.seq) - Number(b.seq))
    .map((row) => ({ seq: row.seq, workflowId: row.workflow_id, message: row.message }));
  const tooLarge = rows.filter((row) => row.bytes !== null).map((row) => steersTooLarge(row.workflow_id, Number(row.bytes), maxBytes));
  return { taken, tooLarge };
}

/** Deletes the rows of these steers (their `seq`): a coordinator's, once it has noted them as not delivered. */
export async function deleteSteers(db: Queryable, steers: readonly TakenSteer[]): Promise<void> {
  if (steers.length === 0) return;
  await db.query("DELETE FROM pi_flow.steers WHERE seq = ANY($1::bigint[])", [steers.map((steer) => steer.seq)]);
}

/**
 * Lets go, in place, steers a worker took but could not hand to their child (it had just ended):
 * they wait again, in their old order. `refused`: the child's harness takes no steers, so they are
 * marked `taken_at` and no worker takes them again; only the coordinator's take of undelivered
 * steers does. One statement: the rows never leave the table.
 */
export async function letGoSteers(db: Queryable, instance: string, steers: readonly TakenSteer[], { refused = false }: { refused?: boolean } = {}): Promise<void> {
  if (steers.length === 0) return;
  await db.query(
    "UPDATE pi_flow.steers SET taken_by = NULL, taken_at = CASE WHEN $3 THEN now() ELSE taken_at END WHERE seq = ANY($1::bigint[]) AND taken_by = $2",
    [steers.map((steer) => steer.seq), instance, refused],
  );
}

/**
 * A child's end on this worker, for the steers of it this instance took and did not save: in one
 * statement, those rows go (the child was handed them: `unread` says which it never read) or, when
 * the child goes back on the queue (`handedBack`), wait again for the next worker; and `unread`, the
 * messages it held and never read, are written back for its coordinator to report (they follow the
 * steers still waiting).
 */
export async function settleSteers(db: Queryable, workflowId: string, instance: string, unread: readonly string[], { handedBack = false }: { handedBack?: boolean } = {}): Promise<void> {
  await db.query(
    `WITH delivered AS (
       DELETE FROM pi_flow.steers WHERE workflow_id = $1 AND taken_by = $2 AND NOT $4 RETURNING 1
     ), released AS (
       UPDATE pi_flow.steers SET taken_by = NULL WHERE workflow_id = $1 AND taken_by = $2 AND $4 RETURNING 1
     )
     INSERT INTO pi_flow.steers (workflow_id, message) SELECT $1, message FROM unnest($3::text[]) AS t(message)`,
    [workflowId, instance, unread.map(storedSteer), handedBack],
  );
}
