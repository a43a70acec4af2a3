/**
 * Tells a coordinator when a worker takes each of its queued children, so a child's run turns from
 * `queued` to `running` when, and only when, some worker runs it. One query per tick covers every
 * child still waiting, whatever the fan-out; the watch stops ticking when nothing waits.
 */

/** A child's DBOS workflow status, as far as the watch reads it. */
export interface QueuedStatus {
  workflowID: string;
  status: string;
  executorId?: string;
}

/** Reads the statuses of the given workflows; one that is not found is simply left out. */
export type ReadStatuses = (workflowIds: string[]) => Promise<readonly QueuedStatus[]>;

export interface TakenWatch {
  /** Calls `onTaken` with the worker's name once the child leaves the queue for a worker; the returned function stops watching it. */
  watch(workflowId: string, onTaken: (worker: string) => void): () => void;
}

/** Still on the queue; any other status but a cancel means a worker dequeued it. */
const WAITING = "ENQUEUED";
const CANCELLED = "CANCELLED";

export function takenWatch(read: ReadStatuses, intervalMs: number): TakenWatch {
  const waiting = new Map<string, (worker: string) => void>();
  let timer: NodeJS.Timeout | undefined;
  let reading = false;

  const tick = async () => {
    if (reading || waiting.size === 0) return;
    reading = true;
    try {
      const statuses = await read([...waiting.keys()]).catch(() => []); // the database is away: the next tick asks again
      for (const { workflowID, status, executorId } of statuses) {
        if (status === WAITING) continue;
        const onTaken = waiting.get(workflowID);
        waiting.delete(workflowID);
        if (onTaken && status !== CANCELLED) onTaken(executorId ?? "an unnamed worker");
      }
    } finally {
      reading = false;
      if (waiting.size === 0) stop();
    }
  };
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };

  return {
    watch(workflowId, onTaken) {
      waiting.set(workflowId, onTaken);
      // unref: a watch never keeps a process alive; the child's result does.
      timer ??= setInterval(() => void tick(), intervalMs).unref();
      return () => {
        if (waiting.get(workflowId) === onTaken) waiting.delete(workflowId);
        if (waiting.size === 0) stop();
      };
    },
  };
}
