/**
 * A coordinator's one look at all of its children waiting in the database: which a worker has
 * taken (the child's run turns from `queued` to `running` then, and only then), and which have
 * settled (their result is then read once). One query per tick covers every child still waiting,
 * whatever the fan-out, instead of one poll per child; the watch stops ticking when nothing waits.
 * A tick that cannot reach the database changes nothing: the next one asks again. Each tick also
 * tells every child still waiting that it looked, and whether the database answered (`onLook`): a
 * cancel the database has not taken yet is sent again then, until the database says the child ended.
 */
import type { Pool } from "pg";
import { MAX_WORKER_NAME_CHARS } from "./names.ts";

/** A child's DBOS workflow status, as far as the watch reads it. */
export interface ChildStatus {
  workflowID: string;
  status: string;
  executorId?: string;
}

/** Reads the statuses of the given workflows; one that is not found is simply left out. */
export type ReadStatuses = (workflowIds: string[]) => Promise<readonly ChildStatus[]>;

export interface WatchedChild {
  /**
   * Resolves once the child's workflow has ended (succeeded, failed or cancelled): its result can be
   * read at once; or `gone` once a look that answered did not find it (its row was deleted while it
   * waited or ran: nothing will ever end it, and its answer, if any, is lost).
   */
  settled: Promise<"ended" | "gone">;
  /** Stops watching it (the caller has its answer, or gave up). */
  stop(): void;
}

export interface ChildWatch {
  /**
   * `onTaken` gets the worker's name once the child leaves the queue for a worker; `onRequeued`
   * the name of the worker it was last seen under once a look finds it back on the queue (that
   * worker refused it, stopped, or went silent), after which `onTaken` is called again for the next
   * worker. `onLook` is called after each look that did not find the child ended, `answered` false
   * when the database could not be read.
   */
  watch(workflowId: string, onTaken: (worker: string) => void, onLook?: (answered: boolean) => void, onRequeued?: (worker: string) => void): WatchedChild;
}

/** The most of a worker's name a coordinator reads (a default name, hostname-pid, is far shorter): the longest `flow worker --name`. */
export { MAX_WORKER_NAME_CHARS };

/**
 * Reads the statuses from DBOS's table in one query of pi-flow's own, which fails at once when the
 * database is away (DBOS's own reads retry with a backoff of up to a minute, so a look would then
 * come that long after the database is back).
 */
export function readChildStatuses(pool: Pick<Pool, "query">, dbosSchema = "dbos"): ReadStatuses {
  return async (workflowIds) => {
    // The worker's name (DBOS's executor ID) goes into the child's progress and evidence: cut by the
    // server, since anyone who can write the table chooses it, and it is read five times a second.
    const { rows } = await pool.query<{ workflow_uuid: string; status: string; executor_id: string | null }>(
      `SELECT workflow_uuid, left(status, 64) AS status, left(executor_id, $2) AS executor_id FROM "${dbosSchema}".workflow_status WHERE workflow_uuid = ANY($1)`,
      [workflowIds, MAX_WORKER_NAME_CHARS],
    );
    return rows.map((row) => ({ workflowID: row.workflow_uuid, status: row.status, ...(row.executor_id ? { executorId: row.executor_id } : {}) }));
  };
}

/** Still on the queue. */
const QUEUED = new Set(["ENQUEUED", "DELAYED"]);
/** DBOS's terminal statuses: the workflow's result (or error) is written. */
const ENDED = new Set(["SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"]);

interface Watcher {
  /** The worker it was last seen running under; none while it waits on the queue. */
  takenBy: string | undefined;
  onTaken(worker: string): void;
  onRequeued?: ((worker: string) => void) | undefined;
  onLook?: ((answered: boolean) => void) | undefined;
  settle(how: "ended" | "gone"): void;
}

export function childWatch(read: ReadStatuses, intervalMs: number): ChildWatch {
  const waiting = new Map<string, Watcher>();
  let timer: NodeJS.Timeout | undefined;
  let reading = false;

  const stopTicking = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };
  const tick = async () => {
    if (reading || waiting.size === 0) return;
    reading = true;
    try {
      let answered = true;
      const asked = [...waiting.entries()];
      const statuses = await read(asked.map(([id]) => id)).catch(() => {
        answered = false;
        return [];
      });
      const found = new Set<string>();
      for (const { workflowID, status, executorId } of statuses) {
        found.add(workflowID);
        const watcher = waiting.get(workflowID);
        if (!watcher) continue;
        if (QUEUED.has(status)) {
          // Back on the queue after a worker took it: the next worker to take it is told again.
          const was = watcher.takenBy;
          watcher.takenBy = undefined;
          if (was !== undefined) watcher.onRequeued?.(was);
          continue;
        }
        const worker = executorId ?? "an unnamed worker";
        if (watcher.takenBy !== undefined && executorId !== undefined && executorId !== watcher.takenBy && !ENDED.has(status)) {
          // Another worker runs it now: put back and taken again between two looks (a takeover).
          const was = watcher.takenBy;
          watcher.takenBy = undefined;
          watcher.onRequeued?.(was);
        }
        if (watcher.takenBy === undefined && status !== "CANCELLED") {
          watcher.takenBy = worker;
          watcher.onTaken(worker);
        }
        if (!ENDED.has(status)) continue;
        waiting.delete(workflowID);
        watcher.settle("ended");
      }
      // Each was enqueued (its row written) before it was watched: a look that answered without it means it was deleted.
      for (const [id, watcher] of answered ? asked : []) {
        if (found.has(id) || waiting.get(id) !== watcher) continue;
        waiting.delete(id);
        watcher.settle("gone");
      }
      for (const watcher of waiting.values()) watcher.onLook?.(answered);
    } finally {
      reading = false;
      if (waiting.size === 0) stopTicking();
    }
  };

  return {
    watch(workflowId, onTaken, onLook, onRequeued) {
      let settle!: (how: "ended" | "gone") => void;
      const settled = new Promise<"ended" | "gone">((resolve) => (settle = resolve));
      const watcher: Watcher = { takenBy: undefined, onTaken, onLook, onRequeued, settle };
      waiting.set(workflowId, watcher);
      // unref: a watch never keeps a process alive on its own; the run waiting on it does.
      timer ??= setInterval(() => void tick(), intervalMs).unref();
      return {
        settled,
        stop() {
          if (waiting.get(workflowId) === watcher) waiting.delete(workflowId);
          if (waiting.size === 0) stopTicking();
        },
      };
    },
  };
}
