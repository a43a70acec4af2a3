/**
 * A child whose folder does not exist in the checkout of the worker that took it (the workers'
 * checkouts differ: one not yet pulled, another branch). That worker refuses it, notes the refusal in
 * `pi_flow.child_refusals`, and puts it back on the queue, delayed by REFUSED_REQUEUE_MS so the
 * other workers get to take it, twice as long each time the same worker refuses it again, up to
 * MAX_REQUEUE_DELAY_MS: each refusal leaves DBOS on that worker polling for the child's end, so a
 * worker that keeps taking it (the others are busy) must not do so every second. Once every live
 * worker of this version has refused it, the child fails, naming its folder and those workers. A
 * child's refusals go with it (the sweep).
 *
 * Contract with the caller: `ensureRefusalsTable` runs under the migration lock (dbos-load.ts);
 * `refuse` runs in the child's workflow, outside any DBOS step, so nothing of it is recorded as the
 * child's answer: a requeued child's workflow function returns to a DBOS that no longer owns it.
 */
import type { Client, Pool, PoolClient } from "pg";
import { SILENT_AFTER_SECONDS } from "./heartbeats.ts";
import { CHILD_QUEUE } from "./names.ts";

type Queryable = Pick<Client | Pool | PoolClient, "query">;

/** How long a refused child waits before a worker may take it again: the others poll the queue far more often. */
export const REFUSED_REQUEUE_MS = 1000;

/** The longest a refused child waits before a worker may take it again. */
export const MAX_REQUEUE_DELAY_MS = 30_000;

/** How many worker names the failure names; the rest are counted. */
const NAMED_WORKERS = 8;

export async function ensureRefusalsTable(db: Queryable): Promise<void> {
  await db.query(
    "CREATE TABLE IF NOT EXISTS pi_flow.child_refusals (workflow_id text NOT NULL, worker text NOT NULL, refused_at timestamptz NOT NULL DEFAULT now(), times integer NOT NULL DEFAULT 1, PRIMARY KEY (workflow_id, worker))",
  );
  await db.query("ALTER TABLE pi_flow.child_refusals ADD COLUMN IF NOT EXISTS times integer NOT NULL DEFAULT 1"); // a table made before the count
}

/** The child went back on the queue, or no live worker can run it (and the message says why). */
export type Refusal = { requeued: true } | { requeued: false; message: string };

/**
 * Notes that `worker` cannot run the child, and either puts it back on the queue (a live worker of
 * `version` has not refused it yet) or returns why it fails. `folder` is the child's folder as the
 * request names it.
 */
export async function refuse(pool: Pool, workflowId: string, folder: string, worker: string, version: string, dbosSchema = "dbos"): Promise<Refusal> {
  const noted = await pool.query<{ times: number }>(
    `INSERT INTO pi_flow.child_refusals (workflow_id, worker) VALUES ($1, $2)
     ON CONFLICT (workflow_id, worker) DO UPDATE SET times = pi_flow.child_refusals.times + 1 RETURNING times`,
    [workflowId, worker],
  );
  const times = Math.min(noted.rows[0]?.times ?? 1, 16);
  const delayMs = Math.min(REFUSED_REQUEUE_MS * 2 ** (times - 1), MAX_REQUEUE_DELAY_MS);
  const { rows } = await pool.query<{ willing: number }>(
    `SELECT count(*)::int AS willing FROM pi_flow.workers w WHERE w.version = $2 AND w.seen_at >= now() - make_interval(secs => $3)
     AND NOT EXISTS (SELECT 1 FROM pi_flow.child_refusals r WHERE r.workflow_id = $1 AND r.worker = w.name)`,
    [workflowId, version, SILENT_AFTER_SECONDS],
  );
  if ((rows[0]?.willing ?? 0) > 0) {
    // As DBOS's resumeWorkflows puts a child back, but delayed: DBOS moves it to ENQUEUED when due
    // by the clock of the worker that looks, so the delay is set by a worker's clock, not the server's.
    await pool.query(
      `UPDATE "${dbosSchema}".workflow_status SET status = 'DELAYED', owner_xid = NULL, queue_name = $2, recovery_attempts = 0,
         workflow_deadline_epoch_ms = NULL, deduplication_id = NULL, started_at_epoch_ms = NULL, completed_at = NULL,
         delay_until_epoch_ms = $3::bigint, updated_at = (EXTRACT(EPOCH FROM now()) * 1000)::bigint
       WHERE workflow_uuid = $1 AND status = 'PENDING'`,
      [workflowId, CHILD_QUEUE, Date.now() + delayMs],
    );
    return { requeued: true };
  }
  const refused = await pool.query<{ worker: string; total: string }>(
    "SELECT left(worker, 128) AS worker, count(*) OVER () AS total FROM pi_flow.child_refusals WHERE workflow_id = $1 ORDER BY refused_at, worker LIMIT $2",
    [workflowId, NAMED_WORKERS],
  );
  await pool.query("DELETE FROM pi_flow.child_refusals WHERE workflow_id = $1", [workflowId]).catch(() => undefined); // the sweep deletes them otherwise
  const names = refused.rows.map((row) => row.worker);
  const more = Number(refused.rows[0]?.total ?? names.length) - names.length;
  const which = `${names.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
  return {
    requeued: false,
    message:
      `The child's folder ${folder} does not exist in the project of any live flow worker (${which} lack it): ` +
      `check out the project where it has that folder on a worker, or give the worker a --cwd that has it.`,
  };
}

/** Refusals of children that are no longer waiting or running. */
export async function deleteSettledRefusals(db: Queryable, dbosSchema = "dbos"): Promise<void> {
  await db.query(
    `DELETE FROM pi_flow.child_refusals r WHERE NOT EXISTS (
       SELECT 1 FROM "${dbosSchema}".workflow_status w WHERE w.workflow_uuid = r.workflow_id AND w.status IN ('PENDING', 'ENQUEUED', 'DELAYED'))`,
  );
}

/** Why a child is back on the queue: in full for its run's diagnostics, and in a few words for a progress line. */
export interface Requeue {
  why: string;
  brief: string;
}

/** A name or folder as a progress line shows it: at most `max` characters. */
const clipped = (text: string, max = 40): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Why a worker gave the child back when the database cannot say. */
export const requeuedUnsaid = (worker: string): Requeue => ({
  why: `worker ${worker} gave it back (the database did not say why)`,
  brief: `${clipped(worker)} gave it back`,
});

/**
 * Why a child a worker had taken is back on the queue, as its coordinator says it: that worker
 * refused it for its folder (a refusal noted), or else handed it back (it stopped, went silent, or
 * the database did not record the child's end there). `folder` is the child's folder as its request names it.
 */
export async function requeuedBecause(db: Queryable, workflowId: string, worker: string, folder: string): Promise<Requeue> {
  const { rows } = await db.query("SELECT 1 FROM pi_flow.child_refusals WHERE workflow_id = $1 AND worker = $2", [workflowId, worker]);
  return rows.length > 0
    ? { why: `its folder ${folder} does not exist in worker ${worker}'s project; another worker may take it`, brief: `${clipped(worker)} lacks its folder ${clipped(folder)}` }
    : {
        why: `worker ${worker} handed it back (it stopped, went silent, or did not record the child's end); another worker takes it`,
        brief: `${clipped(worker)} handed it back`,
      };
}
