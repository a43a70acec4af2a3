/**
 * The worker's watch over the children it runs now: every CANCEL_WATCH_MS it hands each one the
 * steers its coordinator sent through the database, and aborts those whose workflow was cancelled
 * (a cancel reaches a DBOS step only at its next DBOS call, and a child's step makes none while it
 * runs). Contract with dbos-worker.ts: `running` is the worker's own map, read at each look; a child
 * that ends awaits `taking()` before it settles its steers (`settleSteers`), so none the look took is
 * left behind. A steer taken stays in the table, marked taken by this instance, until it is saved.
 */
import type { Pool } from "pg";
import type { SteeringInbox } from "../harnesses/index.ts";
import { readChildStatuses } from "./child-watch.ts";
import type { SessionCheckpoints } from "./session-checkpoint.ts";
import { letGoSteers, takeSteers, type SteerTaker, type TakenSteer } from "./steers.ts";

/** How often the worker looks for cancels of, and steers for, the children it runs. */
export const CANCEL_WATCH_MS = 500;

/** One child this worker runs now, keyed in the worker's map by its DBOS workflow ID. */
export type RunningChild = {
  controller: AbortController;
  steering: SteeringInbox;
  checkpoints?: SessionCheckpoints;
  /** Its harness returned: its extensions were told, its processes ended. */
  stopped?: Promise<void>;
  /** Also what it left (session, steers) is written. */
  settled?: Promise<void>;
};

export interface RunningWatch {
  /** The latest look's take of steers: a child that ends waits for it, so what it took comes back. */
  taking(): Promise<void>;
  stop(): void;
}

export function watchRunningChildren(pool: Pool, taker: SteerTaker, running: ReadonlyMap<string, RunningChild>, onSteered: (workflowId: string) => void): RunningWatch {
  let watching = false;
  let taking: Promise<void> = Promise.resolve();
  const statuses = readChildStatuses(pool);
  const watch = setInterval(() => {
    if (watching || running.size === 0) return;
    watching = true;
    // Taken only for a child that saves what it is handed beside its session (the save deletes the
    // row), or that takes none, whose steers are let go once, refused. The others' wait in the
    // table until their session opens.
    const takers = [...running].filter(([, child]) => child.checkpoints !== undefined || child.steering.takesNone).map(([id]) => id);
    const steers = (taking = takeSteers(pool, takers, undefined, { taker })
      // Steers too large to read stay in the table as written: the child's coordinator says so when its answer is in.
      .then(async ({ taken }) => {
        const unsent: TakenSteer[] = [];
        const refused: TakenSteer[] = [];
        for (const steer of taken) {
          const child = running.get(steer.workflowId);
          // Ended meanwhile: let go, to wait again. Its harness takes no steers: let go once,
          // marked refused, so no look takes it again while the child runs.
          if (!child?.steering.send(steer.message)) {
            (child?.steering.takesNone ? refused : unsent).push(steer);
            continue;
          }
          // Saved with the child's session until a saved turn holds it: a takeover hands it over again.
          child.checkpoints?.handed(steer.message, steer.seq);
          onSteered(steer.workflowId);
        }
        await letGoSteers(pool, taker.instance, unsent);
        await letGoSteers(pool, taker.instance, refused, { refused: true });
      })
      .catch(() => undefined)); // the database is away: the next look takes them
    // One query of pi-flow's own for every running child, reading only their statuses: DBOS's
    // getWorkflowStatus reads each child's whole input and output rows (anyone who can write the
    // table sizes them) and waits out DBOS's retry backoff while the database is away.
    const cancels = statuses([...running.keys()])
      .then((found) => {
        for (const { workflowID, status } of found) if (status === "CANCELLED") running.get(workflowID)?.controller.abort();
      })
      .catch(() => undefined); // the database is away: the next look asks again
    void Promise.all([steers, cancels]).finally(() => (watching = false));
  }, CANCEL_WATCH_MS);
  return { taking: () => taking, stop: () => clearInterval(watch) };
}
