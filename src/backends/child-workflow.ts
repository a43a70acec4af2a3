/**
 * One child on a worker: the DBOS workflow every child runs as (registered once per worker), and
 * its run as one DBOS step (its answer checkpointed, so a recovered workflow never runs a settled
 * child again). The child's session is read and checkpointed, its steers taken and settled, and
 * a stop's hand-back (dbos-worker.ts) leaves what it saved for the next worker.
 */
import type { Pool } from "pg";
import { FlowError } from "../contract/errors.ts";
import { errorCode } from "../runs/index.ts";
import { zeroUsage, SteeringInbox } from "../harnesses/index.ts";
import type { DbosSdk } from "./dbos-load.ts";
import { stalledMessage, statementTimedOut } from "./dbos-load.ts";
import type { WorkerIdentity } from "./heartbeats.ts";
import { CHILD_WORKFLOW } from "./names.ts";
import { isRemoteChildRequest, type RemoteChildResult } from "./remote-child.ts";
import { settleSteers } from "./steers.ts";
import { loadSavedSession } from "./child-sessions.ts";
import { leaveSession, sessionCheckpoints } from "./session-checkpoint.ts";
import { refuse } from "./folder-refusals.ts";
import type { RunningChild } from "./running-watch.ts";
import type { WorkerChildSession, WorkerOptions } from "./worker-options.ts";

/** What a stopping worker (dbos-worker.ts `stop`) tells the children it is running. */
export interface WorkerStopping {
  /**
   * The worker is stopping: its children were stopped to go back on the queue, not cancelled. What
   * they saved (their session, the steers handed to them) stays for the worker that takes them next.
   */
  handingBack: boolean;
  /**
   * The worker is stopping and DBOS did not shut down: it could still record what a stopped child's
   * step returns as the child's answer, so those steps return nothing, and the process's exit ends them.
   */
  withheld: boolean;
}

/** The worker a child runs on: its DBOS, its options, its pool and identity, and its children. */
export interface ChildWorkflowPlace {
  DBOS: DbosSdk["DBOS"];
  options: WorkerOptions;
  pool: Pool;
  me: WorkerIdentity;
  /** The children running here, by workflow ID: the watch's, the stop's. */
  running: Map<string, RunningChild>;
  /** Children whose workflow function ended here, and when: the sweep checks that DBOS recorded their end. */
  endedHere: Map<string, number>;
  stopping: WorkerStopping;
  /** The watch's take of steers in progress (running-watch.ts), if any: a child's end waits for it. */
  taking(): Promise<void>;
}

/** A child refused here went back on the queue: its workflow function ends without an answer. */
class RefusedHere extends Error {}

/** Registers the child workflow with DBOS, before it launches: DBOS runs it for every child this worker dequeues. */
export function registerChildWorkflow(place: ChildWorkflowPlace): void {
  const { DBOS, options, pool, me, running, endedHere, stopping } = place;
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
          if (stopping.handingBack) checkpoints.freeze(); // opened as the worker stops: nothing of this run is saved
          return checkpoints;
        },
      };
      try {
        const answered = await options.run(request, controller.signal, steering, sessions).finally(stopped);
        if (stopping.handingBack) {
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
        await place.taking();
        // A cancelled child's unread are not written back: its coordinator, seeing it cancelled,
        // already said from the database what it had not read, and one written now would wait there for no one.
        const cancelled = controller.signal.aborted && !stopping.handingBack;
        const undelivered = steering.undelivered.splice(0);
        await child.checkpoints?.drain();
        const back = stopping.handingBack || cancelled ? [] : undelivered;
        // Refused, the rows this instance took stay, taken: the next worker or the coordinator takes them.
        await settleSteers(pool, request.workflowId, me.instance, back, { handedBack: stopping.handingBack }).catch((error: unknown) => {
          if (back.length > 0) options.onSteersLost(request.workflowId, back, errorCode(error) ?? "error");
        });
        settle();
      }
    };
    const step = DBOS.runStep(
      async () => {
        try {
          const answer = await body();
          if (!stopping.withheld) return answer;
        } catch (error) {
          if (!stopping.withheld) throw error;
        }
        return await new Promise<never>(() => undefined); // nothing of a stopping.withheld child reaches DBOS
      },
      { name: "child", retriesAllowed: false },
    );
    let settled: RemoteChildResult;
    try {
      settled = await step;
    } catch (error) {
      if (stopping.handingBack) throw error; // handed back, not settled: the stop says so
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
    if (!stopping.handingBack) options.onSettled(request, settled);
    return settled;
  }
}
