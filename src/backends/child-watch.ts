/**
 * A coordinator's one look at all of its children waiting in the database: which a worker has
 * taken (the child's run turns from `queued` to `running` then, and only then), and which have
 * settled (their result is then read once). One query per tick covers every child still waiting,
 * whatever the fan-out, instead of one poll per child; the watch stops ticking when nothing waits.
 * A tick that cannot reach the database changes nothing: the next one asks again.
 */

/** A child's DBOS workflow status, as far as the watch reads it. */
export interface ChildStatus {
  workflowID: string;
  status: string;
  executorId?: string;
}

/** Reads the statuses of the given workflows; one that is not found is simply left out. */
export type ReadStatuses = (workflowIds: string[]) => Promise<readonly ChildStatus[]>;

export interface WatchedChild {
  /** Resolves once the child's workflow has ended (succeeded, failed or cancelled): its result can be read at once. */
  settled: Promise<void>;
  /** Stops watching it (the caller has its answer, or gave up). */
  stop(): void;
}

export interface ChildWatch {
  /** `onTaken` gets the worker's name once the child leaves the queue for a worker. */
  watch(workflowId: string, onTaken: (worker: string) => void): WatchedChild;
}

/** Still on the queue. */
const QUEUED = new Set(["ENQUEUED", "DELAYED"]);
/** DBOS's terminal statuses: the workflow's result (or error) is written. */
const ENDED = new Set(["SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"]);

interface Watcher {
  taken: boolean;
  onTaken(worker: string): void;
  settle(): void;
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
      const statuses = await read([...waiting.keys()]).catch(() => []);
      for (const { workflowID, status, executorId } of statuses) {
        const watcher = waiting.get(workflowID);
        if (!watcher || QUEUED.has(status)) continue;
        if (!watcher.taken && status !== "CANCELLED") {
          watcher.taken = true;
          watcher.onTaken(executorId ?? "an unnamed worker");
        }
        if (!ENDED.has(status)) continue;
        waiting.delete(workflowID);
        watcher.settle();
      }
    } finally {
      reading = false;
      if (waiting.size === 0) stopTicking();
    }
  };

  return {
    watch(workflowId, onTaken) {
      let settle!: () => void;
      const settled = new Promise<void>((resolve) => (settle = resolve));
      const watcher: Watcher = { taken: false, onTaken, settle };
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
