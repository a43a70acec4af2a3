/**
 * The worker side of the dbos backend. Contract with the caller: `startWorker` resolves once this
 * process takes children from the shared queue; each child runs `run` once, as one DBOS step (its
 * answer is checkpointed, so a recovered workflow never runs a settled child again); `stop` stops
 * every child still running, keeping what it saved, hands it back to the queue, for another
 * worker, and disconnects.
 *
 * Lifecycle of one child:
 * 1. a coordinator enqueues workflow `<rootRunId>/agent/<index>` (dbos-coordinator.ts);
 * 2. a worker with a free slot (--concurrency) dequeues it and runs the step;
 * 3. the step's answer is the workflow's result, which the coordinator is polling for; a pi child's
 *    checkpointed session stays in the database for the coordinator to copy into the child's run;
 * 4. a cancel (the coordinator's run was cancelled) is seen by the watch (running-watch.ts) and aborts the harness.
 * A child's run is child-workflow.ts's; this module keeps the worker: its connections, heartbeat,
 * sweep and stop.
 */
import { randomUUID } from "node:crypto";
import { FlowError } from "../contract/errors.ts";
import { beat, claimSilentWorkersChildren, forget, HEARTBEAT_MS, takeName, type WorkerIdentity } from "./heartbeats.ts";
import { answersWithin, handBack, nameTaken, notHandedBack, unrecordedEnds } from "./held-children.ts";
import { requeueHeld } from "./requeue.ts";
import { connectionOptions, connectTimeoutMs, dbosUrl, loadDbos, migrate, QUIET_LOGGER, unusableDatabase } from "./dbos-load.ts";
import { applicationVersion, CHILD_QUEUE, DBOS_APPLICATION } from "./names.ts";
import { deleteSettledSessions } from "./child-sessions.ts";
import { deleteSettledInputs } from "./child-inputs.ts";
import { deleteSilentClaims } from "./coordinator-claims.ts";
import { deleteSettledRefusals } from "./folder-refusals.ts";
import { watchRunningChildren, type RunningChild } from "./running-watch.ts";
import { COORDINATOR_GONE_SECONDS, orphanSweep } from "./orphan-delegations.ts";
import { registerChildWorkflow, type WorkerStopping } from "./child-workflow.ts";
import type { RunningWorker, WorkerOptions } from "./worker-options.ts";

export type { RunningWorker, WorkerChildSession, WorkerOptions } from "./worker-options.ts";

/** How often a worker looks for silent ones (heartbeats.ts). */
export const SWEEP_MS = 5000;

/**
 * How long a stopping worker waits for the children it stopped to settle: a pi child's extensions
 * get 5 s to clean up (pi.ts), a claude or codex CLI 3 s between SIGTERM and SIGKILL unless
 * configured longer. A child still running after this is cut by the process's exit.
 */
export const STOP_SETTLE_MS = 10_000;

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const sweepMs = options.sweepMs ?? SWEEP_MS;
  const sdk = await loadDbos();
  const { DBOS } = sdk;
  await migrate(sdk, options.databaseUrl);
  const running = new Map<string, RunningChild>();
  const stopping: WorkerStopping = { handingBack: false, withheld: false };
  /** Started once DBOS launches; a child DBOS recovers at launch waits on no take of steers before it. */
  let watch: { taking(): Promise<void> } = { taking: () => Promise.resolve() };
  /** Children whose workflow function ended here, and when: the sweep checks that DBOS recorded their end. */
  const endedHere = new Map<string, number>();
  const { default: pg } = await import("pg");
  // Made before DBOS launches: a child it recovers at launch checkpoints through it at once.
  const pool = new pg.Pool({ ...connectionOptions(options.databaseUrl), max: 2 });
  pool.on("error", () => undefined); // a lost connection is opened again at the next use
  // The heartbeat's own connection: queued behind the children's checkpoints on a slow database, a
  // beat would miss the silence bound, and other workers would run this one's children again.
  const beats = new pg.Pool({ ...connectionOptions(options.databaseUrl), max: 1 });
  beats.on("error", () => undefined); // a lost connection is retried at the next beat
  const endPools = () => Promise.all([pool.end().catch(() => undefined), beats.end().catch(() => undefined)]);
  const me: WorkerIdentity = { name: options.name, instance: randomUUID(), version: applicationVersion(), concurrency: options.concurrency };
  try {
    await takeName(beats, me, options.onNameHeld);
  } catch (error) {
    await endPools();
    throw error instanceof FlowError ? error : unusableDatabase(options.databaseUrl, error);
  }
  // Beating from here on: a process of the same name starting now sees this one alive.
  let nameLost = false;
  const heartbeat = setInterval(
    () =>
      void beat(beats, me)
        .then((held) => {
          if (held || nameLost) return;
          nameLost = true;
          options.onNameLost();
        })
        .catch(() => undefined),
    HEARTBEAT_MS,
  );
  DBOS.setConfig({
    name: DBOS_APPLICATION,
    systemDatabaseUrl: dbosUrl(options.databaseUrl), // DBOS's own connections get the server's statement_timeout
    executorID: options.name,
    applicationVersion: applicationVersion(),
    listenQueues: [CHILD_QUEUE],
    logger: QUIET_LOGGER,
    runMigrations: false, // migrate() did it, under the lock
  });
  registerChildWorkflow({ DBOS, options, pool, me, running, endedHere, stopping, taking: () => watch.taking() });
  try {
    await DBOS.launch();
    await DBOS.registerQueue(CHILD_QUEUE, { workerConcurrency: options.concurrency, minPollingIntervalMs: 100, onConflict: "always_update" });
  } catch (error) {
    clearInterval(heartbeat);
    await DBOS.shutdown().catch(() => undefined);
    await forget(beats, me).catch(() => undefined);
    await endPools();
    throw unusableDatabase(options.databaseUrl, error);
  }
  const requeueUnrecorded = async () => {
    const { stuck, settled } = await unrecordedEnds(pool, options.name, endedHere, Date.now(), sweepMs);
    for (const id of settled) endedHere.delete(id);
    // One running here again (a rerun already dequeued) is that run's to record.
    const ids = stuck.filter((id) => !running.has(id));
    if (ids.length === 0) return;
    const requeued = await requeueHeld(pool, ids, [options.name]);
    for (const id of ids) endedHere.delete(id);
    if (requeued.length > 0) options.onRequeued(requeued);
  };
  const cancelOrphans = orphanSweep(pool);
  const sweep = setInterval(() => {
    void deleteSettledSessions(pool).catch(() => undefined);
    void deleteSettledInputs(pool).catch(() => undefined);
    void deleteSilentClaims(pool).catch(() => undefined);
    void deleteSettledRefusals(pool).catch(() => undefined);
    void requeueUnrecorded().catch(() => undefined); // the database is away, or still holds the row: the next sweep tries again
    void cancelOrphans()
      .then((ids) => {
        if (ids.length > 0) options.onOrphansCancelled(ids, COORDINATOR_GONE_SECONDS);
      })
      .catch(() => undefined); // the database is away: the next sweep looks again
    void claimSilentWorkersChildren(pool)
      .then((ids) => {
        if (ids.length > 0) options.onTakeover(ids);
      })
      .catch(() => undefined); // the database is away: the next sweep tries again
  }, sweepMs);
  const watching = (watch = watchRunningChildren(pool, { worker: options.name, instance: me.instance }, running, options.onSteered));
  /** How long a stopping worker waits for the database at each step: as long as a connection may take to open. */
  const stopWithinMs = connectTimeoutMs(options.databaseUrl);
  return {
    running: () => running.size,
    async stop() {
      watching.stop();
      clearInterval(heartbeat);
      clearInterval(sweep);
      const ids = [...running.keys()];
      // DBOS's shutdown and the hand-back's client have no bound of their own on the client side: a
      // database that stops answering (a network split) would hold the stop forever.
      const shutDown = await answersWithin(DBOS.shutdown(), stopWithinMs).catch(() => false);
      // The children are stopped (their extensions told, their processes ended, their steers kept)
      // and go back on the queue below, not cancelled. DBOS, shut down, records nothing of them; one
      // that did not shut down could record a stopped child's answer: those answers are withheld.
      stopping.handingBack = true;
      stopping.withheld = !shutDown;
      const children = [...running.values()];
      for (const { controller, checkpoints } of children) {
        checkpoints?.freeze(); // the session stays as its last whole turn saved it
        controller.abort();
      }
      // Their harness's end is waited for; then, unless withheld (they save nothing more to a database
      // that does not answer), what they save (the last checkpoint, the steers), as long as the
      // database may take to answer: a split must not hold the stop STOP_SETTLE_MS more.
      await answersWithin(Promise.all(children.map((child) => child.stopped)), STOP_SETTLE_MS);
      if (shutDown) await answersWithin(Promise.all(children.map((child) => child.settled)), stopWithinMs);
      if (!shutDown) {
        void endPools();
        throw notHandedBack(options.name, ids, stopWithinMs);
      }
      if (nameLost) {
        // The children under this name are the other process's now (DBOS recovered them there, or
        // a sweep put them back): handed back from here, they would run once more. Its row stays its.
        await endPools();
        throw nameTaken(options.name, ids);
      }
      // Back on the queue, for whichever worker is free next, before this worker's row goes: if
      // that fails (or this process dies first), the row stays, goes silent, and a sweep takes them over.
      // A database that refuses it (every pooled connection held, a server turning connections
      // away) ends the stop as one that does not answer: the row stays for a sweep.
      let handed = false;
      let refusal: unknown;
      try {
        handed = await answersWithin(handBack(pool, beats, me), stopWithinMs).catch((error: unknown) => {
          refusal = error;
          return false;
        });
      } finally {
        // Connections still waiting on a database that does not answer are not waited for: the process's exit ends them.
        if (handed) await endPools();
        else void endPools();
      }
      if (!handed) throw notHandedBack(options.name, ids, stopWithinMs, refusal);
    },
  };
}
