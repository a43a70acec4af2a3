/**
 * Pi sessions of children running on workers, checkpointed in the database so that a worker that
 * takes a child over (its worker died or stopped) continues the session instead of starting afresh.
 *
 * One row per session entry, keyed by the child's DBOS workflow ID and the entry's place in the
 * session: a checkpoint appends the entries the session gained since the last one, and a retried
 * append writes nothing twice. Rows go when the child's workflow settles: the worker deletes them
 * as the child ends, and every sweep deletes those of workflows no longer queued or running.
 *
 * Contract with the caller: `ensureChildSessionsTable` runs under the migration lock (dbos-load.ts);
 * the entries given are already redacted.
 */
import type { Client, Pool, PoolClient } from "pg";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";

type Queryable = Pick<Client | Pool | PoolClient, "query">;

export async function ensureChildSessionsTable(db: Queryable): Promise<void> {
  await db.query(
    "CREATE TABLE IF NOT EXISTS pi_flow.child_sessions (workflow_id text NOT NULL, seq integer NOT NULL, worker text NOT NULL, entry text NOT NULL, saved_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (workflow_id, seq))",
  );
}

/** A child's session as an earlier worker saved it. */
export interface SavedSession {
  entries: SessionEntry[];
  /** The worker that saved its last entry. */
  worker: string;
}

/** Appends `entries` as the session's entries from place `from` on; entries already there stay as they are. */
export async function appendSessionEntries(db: Queryable, workflowId: string, worker: string, from: number, entries: readonly string[]): Promise<void> {
  if (entries.length === 0) return;
  await db.query(
    "INSERT INTO pi_flow.child_sessions (workflow_id, seq, worker, entry) SELECT $1, $3::integer + ord - 1, $2, entry FROM unnest($4::text[]) WITH ORDINALITY AS t(entry, ord) ON CONFLICT (workflow_id, seq) DO NOTHING",
    [workflowId, worker, from, entries],
  );
}

const isEntry = (value: unknown): value is SessionEntry =>
  value !== null && typeof value === "object" && typeof (value as { type?: unknown }).type === "string" && typeof (value as { id?: unknown }).id === "string";

/**
 * The child's saved session, its entries in order up to the first gap or unreadable row (a
 * checkpoint always ends on a whole turn, so what precedes a gap is a session Pi can continue); none
 * when nothing was saved.
 */
export async function loadSavedSession(db: Queryable, workflowId: string): Promise<SavedSession | null> {
  const { rows } = await db.query<{ seq: number; worker: string; entry: string }>(
    "SELECT seq, worker, entry FROM pi_flow.child_sessions WHERE workflow_id = $1 ORDER BY seq",
    [workflowId],
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
  return entries.length === 0 ? null : { entries, worker };
}

export async function deleteSavedSession(db: Queryable, workflowId: string): Promise<void> {
  await db.query("DELETE FROM pi_flow.child_sessions WHERE workflow_id = $1", [workflowId]);
}

/** Deletes the sessions of children whose workflow is no longer queued or running (settled, cancelled, or gone). */
export async function deleteSettledSessions(db: Queryable, dbosSchema = "dbos"): Promise<void> {
  await db.query(
    `DELETE FROM pi_flow.child_sessions s WHERE NOT EXISTS (SELECT 1 FROM "${dbosSchema}".workflow_status w WHERE w.workflow_uuid = s.workflow_id AND w.status IN ('PENDING', 'ENQUEUED'))`,
  );
}
