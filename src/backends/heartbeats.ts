/**
 * Which workers are alive, and what to do with the children of one that went silent. DBOS takes a
 * dead machine's workflows over only through its hosted service; pi-flow does it itself: every
 * worker writes a heartbeat, and every worker sweeps. A sweep claims a silent worker's row (so one
 * sweeper handles it), and puts every child that worker had taken back on the queue.
 *
 * Contract with the caller: `ensureWorkersTable` runs under the migration lock (dbos-load.ts);
 * `beat` and `sweep` are idempotent and may run on any number of workers at once.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Client, Pool, PoolClient } from "pg";
import { FlowError } from "../contract/errors.ts";
import { CHILD_QUEUE } from "./names.ts";
import { requeueHeld } from "./requeue.ts";

/** A worker not heard from for this long is taken for dead, and its children are run elsewhere. */
export const SILENT_AFTER_SECONDS = 20;

/** How often a worker says it is alive. */
export const HEARTBEAT_MS = 2000;

type Queryable = Pick<Client | Pool | PoolClient, "query">;

export async function ensureWorkersTable(db: Queryable): Promise<void> {
  await db.query("CREATE SCHEMA IF NOT EXISTS pi_flow");
  await db.query(
    "CREATE TABLE IF NOT EXISTS pi_flow.workers (name text PRIMARY KEY, version text NOT NULL, concurrency integer NOT NULL, started_at timestamptz NOT NULL DEFAULT now(), seen_at timestamptz NOT NULL DEFAULT now())",
  );
  // Which process holds the name (claimName): a random ID each `flow worker` makes at start.
  await db.query("ALTER TABLE pi_flow.workers ADD COLUMN IF NOT EXISTS instance text");
}

/** One `flow worker` process: its name (its DBOS executor ID) and the instance that tells it from another process of that name. */
export interface WorkerIdentity {
  name: string;
  instance: string;
  version: string;
  concurrency: number;
}

/**
 * Takes the worker's name for this process: its row is created, or taken over when it is this
 * instance's or silent for SILENT_AFTER_SECONDS (its process is gone). Otherwise another process
 * may hold the name: the epoch milliseconds its row was last seen are returned, and nothing changes.
 */
export async function claimName(db: Queryable, worker: WorkerIdentity): Promise<number | null> {
  const { rows } = await db.query(
    `INSERT INTO pi_flow.workers (name, version, concurrency, instance) VALUES ($1, $2, $3, $4)
     ON CONFLICT (name) DO UPDATE SET instance = $4, version = $2, concurrency = $3, seen_at = now(), started_at = now()
     WHERE pi_flow.workers.instance IS NOT DISTINCT FROM $4 OR pi_flow.workers.seen_at < now() - make_interval(secs => $5)
     RETURNING 1`,
    [worker.name, worker.version, worker.concurrency, worker.instance, SILENT_AFTER_SECONDS],
  );
  if (rows.length > 0) return null;
  const held = await db.query<{ seen: number }>("SELECT (EXTRACT(EPOCH FROM seen_at) * 1000)::float8 AS seen FROM pi_flow.workers WHERE name = $1", [worker.name]);
  return held.rows[0]?.seen ?? 0; // deleted meanwhile (a sweep): the next claim inserts it
}

export interface WorkerRow {
  name: string;
  version: string;
  concurrency: number;
  secondsSinceSeen: number;
}

/**
 * This worker is alive: its row, created or refreshed. A row another instance took over (this one
 * was silent, and a process of its name started) stays that one's: false then, and this one must stop.
 */
export async function beat(db: Queryable, worker: WorkerIdentity): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO pi_flow.workers (name, version, concurrency, instance) VALUES ($1, $2, $3, $4)
     ON CONFLICT (name) DO UPDATE SET seen_at = now(), version = $2, concurrency = $3 WHERE pi_flow.workers.instance IS NOT DISTINCT FROM $4`,
    [worker.name, worker.version, worker.concurrency, worker.instance],
  );
  return (rowCount ?? 0) > 0;
}

/** A worker that stops cleanly leaves no row to sweep (only its own: not one another instance of its name holds now). */
export async function forget(db: Queryable, worker: Pick<WorkerIdentity, "name" | "instance">): Promise<void> {
  await db.query("DELETE FROM pi_flow.workers WHERE name = $1 AND instance IS NOT DISTINCT FROM $2", [worker.name, worker.instance]);
}

/** How many workers `flow help` and `/flow doctor` name, and how much of each name and version: anyone who can write the table chooses its rows. */
export const WORKERS_SHOWN = { count: 20, chars: 64 } as const;

/**
 * The workers seen, newest first, at most `WORKERS_SHOWN.count` of them, each name and version cut
 * by the server to `WORKERS_SHOWN.chars` characters; `total` counts them all.
 */
export async function workersSeen(db: Queryable): Promise<{ rows: WorkerRow[]; total: number }> {
  const { rows } = await db.query<{ name: string; version: string; concurrency: number; seconds: number; total: string }>(
    `SELECT left(name, $2) AS name, left(version, $2) AS version, concurrency, EXTRACT(EPOCH FROM now() - seen_at)::float8 AS seconds, count(*) OVER () AS total
     FROM pi_flow.workers ORDER BY seen_at DESC LIMIT $1`,
    [WORKERS_SHOWN.count, WORKERS_SHOWN.chars],
  );
  return {
    rows: rows.map((row) => ({ name: row.name, version: row.version, concurrency: row.concurrency, secondsSinceSeen: row.seconds })),
    total: Number(rows[0]?.total ?? 0),
  };
}

/**
 * Claims the silent workers (a row lock another sweeper skips), has `requeue` put the children they
 * had taken and not finished back on the queue (requeue.ts; a test may fail it), and only then
 * deletes their rows, in the same transaction: a requeue that fails (the database went away, a statement cancelled) rolls the claim
 * back, and the next sweep claims them again, instead of the rows going and their children staying
 * pending under a name no sweep looks for any more. Returns the children put back.
 * A worker restarted under a silent one's name writes a new row and starts afresh.
 */
export async function claimSilentWorkersChildren(
  pool: Pool,
  requeue: (workflowIds: string[], db: PoolClient, workers: string[]) => Promise<string[]> = (ids, db, workers) => requeueHeld(db, ids, workers),
  dbosSchema = "dbos",
): Promise<string[]> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const { rows: silent } = await client.query<{ name: string }>(
      "SELECT name FROM pi_flow.workers WHERE seen_at < now() - make_interval(secs => $1) FOR UPDATE SKIP LOCKED",
      [SILENT_AFTER_SECONDS],
    );
    if (silent.length === 0) {
      await client.query("COMMIT");
      return [];
    }
    const names = silent.map((row) => row.name);
    const { rows: children } = await client.query<{ workflow_uuid: string }>(
      `SELECT workflow_uuid FROM "${dbosSchema}".workflow_status WHERE status = 'PENDING' AND queue_name = $1 AND executor_id = ANY($2)`,
      [CHILD_QUEUE, names],
    );
    const ids = children.map((row) => row.workflow_uuid);
    // Those cancelled since the read above stay cancelled.
    const requeued = ids.length > 0 ? await requeue(ids, client, names) : [];
    await client.query("DELETE FROM pi_flow.workers WHERE name = ANY($1)", [names]);
    await client.query("COMMIT");
    return requeued;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * Takes the worker's name before DBOS launches, since DBOS then recovers every unfinished child of
 * that executor ID: a second live process of the name would run the first's children again, and
 * keep its row fresh so that none of them is taken over once the first dies. A row another process
 * still refreshes refuses this one; one that goes silent was a process killed before this restart,
 * whose children this worker then recovers.
 */
export async function takeName(pool: Pool, me: WorkerIdentity, onHeld: (seconds: number) => void): Promise<void> {
  let first: number | undefined;
  for (;;) {
    const held = await claimName(pool, me);
    if (held === null) return;
    if (first === undefined) onHeld(SILENT_AFTER_SECONDS);
    else if (held > first) {
      throw new FlowError(
        "configuration_invalid",
        `Another flow worker named ${me.name} is running on this database (its heartbeat goes on): two workers of one name would run each other's children again and hide each other's death. Give each worker its own --name (the default, hostname-pid, is unique).`,
      );
    }
    first ??= held;
    await sleep(HEARTBEAT_MS / 2);
  }
}
