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
 */
import { randomUUID } from "node:crypto";
import { FlowError } from "../contract/errors.ts";
import { errorCode } from "../runs/index.ts";
import { beat, claimSilentWorkersChildren, forget, HEARTBEAT_MS, takeName, type WorkerIdentity } from "./heartbeats.ts";
import { answersWithin, handBack, notHandedBack, unrecordedEnds } from "./held-children.ts";
import { requeueHeld } from "./requeue.ts";
import { connectionOptions, connectTimeoutMs, dbosUrl, loadDbos, migrate, QUIET_LOGGER, stalledMessage, statementTimedOut, unusableDatabase } from "./dbos-load.ts";
import { applicationVersion, CHILD_QUEUE, CHILD_WORKFLOW, DBOS_APPLICATION } from "./names.ts";
import { isRemoteChildRequest, type RemoteChildRequest, type RemoteChildResult } from "./remote-child.ts";
import { settleSteers } from "./steers.ts";
import { deleteSettledSessions, loadSavedSession } from "./child-sessions.ts";
import { deleteSettledInputs } from "./child-inputs.ts";
import { leaveSession, sessionCheckpoints, type SessionCheckpoints } from "./session-checkpoint.ts";
import { deleteSettledRefusals, refuse } from "./folder-refusals.ts";
import { zeroUsage, SteeringInbox } from "../harnesses/index.ts";
import { watchRunningChildren, type RunningChild } from "./running-watch.ts";

export interface WorkerOptions {
  databaseUrl: string;
  /** The DBOS executor ID: a worker restarted under the same name recovers what it was running. */
  name: string;
  concurrency: number;
  /**
   * `steering` takes the steers the coordinator sends this child through the database; `sessions`
   * holds what an earlier worker saved of its Pi session, and where this worker checkpoints it.
   */
  run(request: RemoteChildRequest, signal: AbortSignal, steering: SteeringInbox, sessions: WorkerChildSession): Promise<RemoteChildResult>;
  onStarted(request: RemoteChildRequest): void;
  /** Whether the child's folder does not exist in this worker's checkout: it is then refused here (folder-refusals.ts). */
  folderMissing(request: RemoteChildRequest): boolean;
  /** A child refused here (its folder is missing) went back on the queue, for another worker. */
  onRefused(request: RemoteChildRequest): void;
  /** A steer for a child this worker runs was handed to it. */
  onSteered(workflowId: string): void;
  /**
   * Steers the child had not read that could be neither saved nor put back (the database refused
   * them): no worker or coordinator will see them again, so this is the last word on them.
   */
  onSteersLost(workflowId: string, messages: readonly string[], why: string): void;
  onSettled(request: RemoteChildRequest, result: RemoteChildResult): void;
  /**
   * The child failed here without an answer of its harness: its workflow's input names another
   * workflow, or the database held one of its queries past its statement_timeout. `workflowId` is
   * the DBOS workflow's own ID.
   */
  onFailed(workflowId: string, runId: string, message: string): void;
  /** The sweep put a silent worker's unfinished children back on the queue. */
  onTakeover(workflowIds: readonly string[]): void;
  /**
   * Children that ended here but whose end DBOS could not record (the database cancelled its write
   * at the statement_timeout): put back on the queue, so a worker runs them again from their saved
   * step or session instead of their coordinators waiting on them forever.
   */
  onRequeued(workflowIds: readonly string[]): void;
  /** A worker of this name was heard from in the last `seconds`: this one waits to see whether it is alive, that long at most. */
  onNameHeld(seconds: number): void;
  /** How often the sweep runs (SWEEP_MS unless given: `PI_FLOW_WORKER_SWEEP_MS`, worker.ts). */
  sweepMs?: number;
}

/** A child's Pi session in the database (child-sessions.ts), for a harness that keeps one. */
export interface WorkerChildSession {
  /**
   * Reads what an earlier worker saved (none when it cannot be read now: the child then starts
   * afresh rather than waiting) and starts checkpointing; failures are told through `onDiagnostic`.
   */
  open(onDiagnostic: (message: string) => void): Promise<SessionCheckpoints>;
}

export interface RunningWorker {
  /** Children this worker is running now. */
  running(): number;
  stop(): Promise<void>;
}

/** A child refused here went back on the queue: its workflow function ends without an answer. */
class RefusedHere extends Error {}

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
  /**
   * The worker is stopping: its children were stopped to go back on the queue, not cancelled. What
   * they saved (their session, the steers handed to them) stays for the worker that takes them next.
   */
  let handingBack = false;
  /**
   * The worker is stopping and DBOS did not shut down: it could still record what a stopped child's
   * step returns as the child's answer, so those steps return nothing, and the process's exit ends them.
   */
  let withheld = false;
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
  const heartbeat = setInterval(() => void beat(beats, me).catch(() => undefined), HEARTBEAT_MS);
  DBOS.setConfig({
    name: DBOS_APPLICATION,
    systemDatabaseUrl: dbosUrl(options.databaseUrl), // DBOS's own connections get the server's statement_timeout
    executorID: options.name,
    applicationVersion: applicationVersion(),
    listenQueues: [CHILD_QUEUE],
    logger: QUIET_LOGGER,
    runMigrations: false, // migrate() did it, under the lock
  });
  DBOS.registerWorkflow(
    async (request: unknown): Promise<RemoteChildResult> => {
      const own = DBOS.workflowID ?? "";
      let requeued = false;
      try {
        return await runChild(request, own);
      } catch (error) {
        requeued = error instanceof RefusedHere;
        throw error;
      } finally {
        // One requeued is not this worker's to record: DBOS no longer holds it as running here.
        if (own !== "" && !requeued) endedHere.set(own, Date.now());
      }
    },
    { name: CHILD_WORKFLOW },
  );
  async function runChild(request: unknown, own: string): Promise<RemoteChildResult> {
    if (!isRemoteChildRequest(request)) throw new Error("The workflow's input is not a child request pi-flow can read.");
    // The child's running entry, steers and saved session are keyed by this ID: one read from the
    // input, which whoever enqueued it wrote, could name another run's child and take its session.
    if (request.workflowId !== own) {
      const message = `The workflow ${own} names another child, ${request.workflowId}, in its input: refused, nothing run.`;
      options.onFailed(own, request.runId, message);
      throw new Error(message);
    }
    if (options.folderMissing(request)) {
      const refusal = await refuse(pool, own, request.cwd, options.name, me.version);
      if (refusal.requeued) {
        options.onRefused(request);
        throw new RefusedHere(); // DBOS, which no longer owns the child, records nothing of it
      }
      options.onFailed(own, request.runId, refusal.message);
      return { result: { outcome: "failed", error: { code: "configuration_invalid", message: refusal.message }, usage: zeroUsage() }, output: [], diagnostics: [], worker: options.name };
    }
    // The child's end as the step saw it: a cancelled workflow's step runs to its end (the harness
    // aborted) but DBOS refuses to record it, so the line below would never be said.
    let ended: RemoteChildResult | undefined;
    const body = async (): Promise<RemoteChildResult> => {
      const controller = new AbortController();
      const steering = new SteeringInbox();
      const child: RunningChild = { controller, steering };
      let settle = () => {};
      child.settled = new Promise<void>((resolve) => (settle = resolve));
      let stopped = () => {};
      child.stopped = new Promise<void>((resolve) => (stopped = resolve));
      running.set(request.workflowId, child);
      options.onStarted(request);
      const sessions: WorkerChildSession = {
        async open(onDiagnostic) {
          const saved = await loadSavedSession(pool, request.workflowId).catch((error: unknown) => {
            // Too large to read (forged): the child starts afresh, and its diagnostics say why.
            if (error instanceof FlowError) onDiagnostic(error.message);
            return null;
          });
          // Steers the earlier worker had handed over and no turn had read yet: handed over again, first.
          for (const message of saved?.steers ?? []) steering.send(message);
          const unread = () => steering.unread;
          const checkpoints = (child.checkpoints = sessionCheckpoints({ pool, workflowId: request.workflowId, worker: options.name, saved, unread, onDiagnostic }));
          if (handingBack) checkpoints.freeze(); // opened as the worker stops: nothing of this run is saved
          return checkpoints;
        },
      };
      try {
        const answered = await options.run(request, controller.signal, steering, sessions).finally(stopped);
        if (handingBack) {
          // Stopped to go back on the queue: its session stays as last saved, for the next worker.
          await child.checkpoints?.drain();
          return answered; // DBOS, shut down, records nothing of it
        }
        const result = child.checkpoints ? await leaveSession(pool, request.workflowId, options.name, child.checkpoints, answered, controller.signal) : answered;
        ended = result;
        return result;
      } finally {
        steering.close();
        running.delete(request.workflowId);
        // A look that took steers for this child as it ended let them go (running-watch.ts). Those
        // this instance took and did not save go now, in one statement with the ones the child never
        // read, written back: its coordinator, reading its answer, reports those not delivered. A
        // child handed back keeps those its saved session holds, which the next worker hands over
        // again, and its taken rows wait again, for that worker to take.
        await watch.taking();
        // A cancelled child's unread are not written back: its coordinator, seeing it cancelled,
        // already said from the database what it had not read, and one written now would wait there for no one.
        const cancelled = controller.signal.aborted && !handingBack;
        const undelivered = steering.undelivered.splice(0);
        await child.checkpoints?.drain();
        const back = handingBack || cancelled ? [] : undelivered;
        // Refused, the rows this instance took stay, taken: the next worker or the coordinator takes them.
        await settleSteers(pool, request.workflowId, me.instance, back, { handedBack: handingBack }).catch((error: unknown) => {
          if (back.length > 0) options.onSteersLost(request.workflowId, back, errorCode(error) ?? "error");
        });
        settle();
      }
    };
    const step = DBOS.runStep(
      async () => {
        try {
          const answer = await body();
          if (!withheld) return answer;
        } catch (error) {
          if (!withheld) throw error;
        }
        return await new Promise<never>(() => undefined); // nothing of a withheld child reaches DBOS
      },
      { name: "child", retriesAllowed: false },
    );
    let settled: RemoteChildResult;
    try {
      settled = await step;
    } catch (error) {
      if (handingBack) throw error; // handed back, not settled: the stop says so
      if (ended) options.onSettled(request, ended);
      if (!statementTimedOut(error)) throw error;
      // A statement the server held (a lock another session keeps, a stalled server) was cancelled
      // there: the child fails with words that say so, instead of the worker waiting on it forever.
      const message = stalledMessage(options.name, request.workflowId);
      options.onFailed(request.workflowId, request.runId, message);
      throw new Error(message);
    }
    // Said once DBOS has checkpointed the step: a worker killed after this line leaves a child no
    // takeover runs again (it takes the saved result, and says so again). One handed back did not settle.
    if (!handingBack) options.onSettled(request, settled);
    return settled;
  }
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
  const sweep = setInterval(() => {
    void deleteSettledSessions(pool).catch(() => undefined);
    void deleteSettledInputs(pool).catch(() => undefined);
    void deleteSettledRefusals(pool).catch(() => undefined);
    void requeueUnrecorded().catch(() => undefined); // the database is away, or still holds the row: the next sweep tries again
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
      handingBack = true;
      withheld = !shutDown;
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
