/**
 * Pi sessions of children running on workers, checkpointed in the database so that a worker that
 * takes a child over (its worker died or stopped) continues the session instead of starting afresh.
 *
 * One row per session entry, keyed by the child's DBOS workflow ID and the entry's place in the
 * session: a checkpoint appends the entries the session gained since the last one, and a retried
 * append writes nothing twice. Beside them, `child_session_steers` holds the steers the worker had
 * handed to the child that its session had not taken into a turn yet (they are not in the
 * entries): the worker that continues the child hands them over again. Rows go once the child's
 * workflow settles: the coordinator deletes them when it has copied the session into the child's run
 * (kept-session.ts), the worker when there is nothing whole to copy, and every sweep those of
 * workflows settled longer than SETTLED_SESSION_GRACE_MS ago (a coordinator that died before its copy).
 *
 * Contract with the caller: `ensureChildSessionsTable` runs under the migration lock (dbos-load.ts);
 * the entries given are already redacted.
 */
import type { Client, Pool, PoolClient } from "pg";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { FlowError } from "../contract/errors.ts";
import { TRANSCRIPT_MAX_BYTES } from "../harnesses/index.ts";
import { redactText } from "../runs/index.ts";

type Queryable = Pick<Client | Pool | PoolClient, "query">;

export async function ensureChildSessionsTable(db: Queryable): Promise<void> {
  await db.query(
    "CREATE TABLE IF NOT EXISTS pi_flow.child_sessions (workflow_id text NOT NULL, seq integer NOT NULL, worker text NOT NULL, entry text NOT NULL, saved_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (workflow_id, seq))",
  );
  await db.query("CREATE TABLE IF NOT EXISTS pi_flow.child_session_steers (workflow_id text PRIMARY KEY, messages text NOT NULL)");
}

/** A child's session as an earlier worker saved it. */
export interface SavedSession {
  entries: SessionEntry[];
  /** The worker that saved its last entry. */
  worker: string;
  /** Steers handed to the child that no turn of it had read yet: to hand over again, in order. */
  steers: string[];
}

/**
 * Writes `entries` as the session's entries from place `from` on, replaces the steers not read
 * yet with `unread`, and deletes from `pi_flow.steers` the rows (numbers `handed`) of the steers the
 * worker took that these account for, in one statement: a takeover never sees a steer both in the
 * entries and among the unread, nor both saved and still waiting, nor in neither place (the worker
 * killed between a take and its save). Rows at those places are overwritten and rows after them deleted: a worker that
 * started afresh (nothing readable was saved) or continued from a gap owns the session from there
 * on, and rows it did not write (an earlier worker's, forged ones) must not stand in for its own; a
 * retried write writes the same rows again.
 *
 * Nothing is written while the child's workflow is another worker's (`executor_id`): a worker
 * taken for dead that is alive still (a network split) must not overwrite the session of the
 * worker that took its child over. False then.
 */
export async function appendSessionEntries(
  db: Queryable,
  workflowId: string,
  worker: string,
  from: number,
  entries: readonly string[],
  unread: readonly string[],
  handed: readonly string[] = [],
  dbosSchema = "dbos",
): Promise<boolean> {
  const { rows } = await db.query<{ mine: boolean }>(
    `WITH owner AS (
       SELECT NOT EXISTS (SELECT 1 FROM "${dbosSchema}".workflow_status WHERE workflow_uuid = $1 AND executor_id <> $2) AS mine
     ), stale AS (
       DELETE FROM pi_flow.child_sessions WHERE workflow_id = $1 AND seq >= $3::integer + cardinality($4::text[]) AND (SELECT mine FROM owner) RETURNING 1
     ), appended AS (
       INSERT INTO pi_flow.child_sessions (workflow_id, seq, worker, entry)
       SELECT $1, $3::integer + ord - 1, $2, entry FROM unnest($4::text[]) WITH ORDINALITY AS t(entry, ord) WHERE (SELECT mine FROM owner)
       ON CONFLICT (workflow_id, seq) DO UPDATE SET worker = EXCLUDED.worker, entry = EXCLUDED.entry, saved_at = now() RETURNING 1
     ), cleared AS (
       DELETE FROM pi_flow.child_session_steers WHERE workflow_id = $1 AND $5::text IS NULL AND (SELECT mine FROM owner) RETURNING 1
     ), kept AS (
       INSERT INTO pi_flow.child_session_steers (workflow_id, messages) SELECT $1, $5 WHERE $5::text IS NOT NULL AND (SELECT mine FROM owner)
       ON CONFLICT (workflow_id) DO UPDATE SET messages = EXCLUDED.messages RETURNING 1
     ), saved AS (
       DELETE FROM pi_flow.steers WHERE workflow_id = $1 AND seq = ANY($6::bigint[]) AND (SELECT mine FROM owner) RETURNING 1
     )
     SELECT mine FROM owner`,
    // Redacted as the steers in pi_flow.steers are (steers.ts): a forged row handed over whole is not kept whole.
    [workflowId, worker, from, entries, unread.length > 0 ? JSON.stringify(unread.map((message) => redactText(message).text)) : null, handed],
  );
  return rows[0]?.mine === true;
}

/** A `child_session_steers` row's messages; none when it holds no JSON array (anyone who can write there chose it). */
export function savedSteers(messages: string | undefined): string[] {
  try {
    const parsed: unknown = messages === undefined ? [] : JSON.parse(messages);
    return Array.isArray(parsed) ? parsed.filter((message): message is string => typeof message === "string") : [];
  } catch {
    return [];
  }
}

async function unreadSteers(db: Queryable, workflowId: string): Promise<string[]> {
  const { rows } = await db.query<{ messages: string }>("SELECT messages FROM pi_flow.child_session_steers WHERE workflow_id = $1", [workflowId]);
  return savedSteers(rows[0]?.messages);
}

const isEntry = (value: unknown): value is SessionEntry =>
  value !== null && typeof value === "object" && typeof (value as { type?: unknown }).type === "string" && typeof (value as { id?: unknown }).id === "string";

/**
 * The most of a saved session (its entries and unread steers) a read takes from the database: a
 * worker checkpoints at most TRANSCRIPT_MAX_BYTES of entries, and their unread steers come to far
 * less than the margin; anyone who can write there can forge rows of any size, which a read would
 * hold in memory whole.
 */
export const MAX_SESSION_READ_BYTES = TRANSCRIPT_MAX_BYTES + 8 * 1024 * 1024;

/**
 * The most rows of a saved session a read takes: rows forged with empty entries measure nothing
 * but each costs the read memory. A Pi entry comes to hundreds of bytes, so a session within
 * TRANSCRIPT_MAX_BYTES has far fewer.
 */
export const MAX_SESSION_READ_ROWS = 200_000;

/** How much of the worker's name a saved row gives back: the most a name may have (child-watch.ts MAX_WORKER_NAME_CHARS). */
const WORKER_NAME_CHARS = 128;

/**
 * The child's saved session, its entries in order up to the first gap or unreadable row (a
 * checkpoint always ends on a whole turn, so what precedes a gap is a session Pi can continue); none
 * when nothing was saved. Rows the server measures over `maxBytes` together are not read: a
 * failure names the bound, and they stay as written.
 */
export async function loadSavedSession(db: Queryable, workflowId: string, maxBytes = MAX_SESSION_READ_BYTES, maxRows = MAX_SESSION_READ_ROWS): Promise<SavedSession | null> {
  const { rows: [size] } = await db.query<{ bytes: string; rows: string }>(
    `SELECT (COALESCE((SELECT sum(octet_length(entry)) FROM pi_flow.child_sessions WHERE workflow_id = $1), 0)
      + COALESCE((SELECT octet_length(messages) FROM pi_flow.child_session_steers WHERE workflow_id = $1), 0))::bigint AS bytes,
      (SELECT count(*) FROM pi_flow.child_sessions WHERE workflow_id = $1) AS rows`,
    [workflowId],
  );
  const bytes = Number(size?.bytes ?? 0);
  const rowCount = Number(size?.rows ?? 0);
  if (rowCount > maxRows) {
    throw new FlowError(
      "failed",
      `The saved Pi session of ${workflowId} is ${rowCount} rows in the database, over the ${maxRows} rows pi-flow reads: not read. Its rows stay in pi_flow.child_sessions, as they were written, for whoever looks into them.`,
    );
  }
  if (bytes > maxBytes) {
    throw new FlowError(
      "failed",
      `The saved Pi session of ${workflowId} is ${bytes} bytes in the database, over the ${maxBytes} bytes pi-flow reads: not read. Its rows stay in pi_flow.child_sessions and pi_flow.child_session_steers, as they were written, for whoever looks into them.`,
    );
  }
  const { rows } = await db.query<{ seq: number; worker: string; entry: string }>(
    "SELECT seq, left(worker, $2) AS worker, entry FROM pi_flow.child_sessions WHERE workflow_id = $1 ORDER BY seq",
    [workflowId, WORKER_NAME_CHARS],
  );
  const entries: SessionEntry[] = [];
  let worker = "";
  for (const row of rows) {
    if (row.seq !== entries.length) break;
    let parsed: unknown;
    try {
      parsed = JSON.parse(row.entry);
    } catch {
      break;
    }
    if (!isEntry(parsed)) break;
    entries.push(parsed);
    worker = row.worker;
  }
  const steers = await unreadSteers(db, workflowId);
  return entries.length === 0 && steers.length === 0 ? null : { entries, worker, steers };
}

/**
 * Deletes the child's saved session and unread steers. Given `worker`, only while no other worker
 * runs the child (as `appendSessionEntries`): a worker taken for dead must not delete the session
 * of the worker that took its child over.
 */
export async function deleteSavedSession(db: Queryable, workflowId: string, worker?: string, dbosSchema = "dbos"): Promise<void> {
  const mine = `NOT EXISTS (SELECT 1 FROM "${dbosSchema}".workflow_status WHERE workflow_uuid = $1 AND executor_id <> $2)`;
  for (const table of ["child_sessions", "child_session_steers"]) {
    await db.query(`DELETE FROM pi_flow.${table} WHERE workflow_id = $1 AND ($2::text IS NULL OR ${mine})`, [workflowId, worker ?? null]);
  }
}

/**
 * How long the rows of a settled child stay for its coordinator to copy: a coordinator copies them as
 * soon as it reads the child's answer, so this only needs to outlast a database outage of its.
 */
export const SETTLED_SESSION_GRACE_MS = 15 * 60 * 1000;

/**
 * Deletes the sessions (and undelivered steers) of children whose workflow settled (or was cancelled) more than `graceMs`
 * ago, or is gone; those still queued or running stay.
 */
export async function deleteSettledSessions(db: Queryable, graceMs = SETTLED_SESSION_GRACE_MS, dbosSchema = "dbos"): Promise<void> {
  // Steers no worker handed over wait for the child's coordinator to report them; one that died first leaves them to this.
  for (const table of ["child_sessions", "child_session_steers", "steers"]) {
    await db.query(
      `DELETE FROM pi_flow.${table} s WHERE NOT EXISTS (
         SELECT 1 FROM "${dbosSchema}".workflow_status w WHERE w.workflow_uuid = s.workflow_id
         AND (w.status IN ('PENDING', 'ENQUEUED', 'DELAYED') OR w.updated_at > (EXTRACT(EPOCH FROM now()) * 1000)::bigint - $1::bigint))`,
      [graceMs],
    );
  }
}
