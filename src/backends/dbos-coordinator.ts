/**
 * The coordinating side of the dbos backend: each agent() child becomes a DBOS workflow on the
 * shared queue, with the fixed ID `<rootRunId>/agent/<index>`, and the coordinator waits for its
 * result. It never runs a child itself: it uses DBOSClient, which enqueues and reads but does not
 * dequeue, so only `flow worker`s take children.
 */
import type { DBOSClient } from "@dbos-inc/dbos-sdk";
import { FlowError } from "../contract/errors.ts";
import { connectionOptions, dbosUrl, loadDbos, migrate, QUIET_LOGGER, unusableDatabase } from "./dbos-load.ts";
import type { FleetChildren } from "./fleet.ts";
import { applicationVersion, CHILD_QUEUE, CHILD_WORKFLOW, DBOS_APPLICATION } from "./names.ts";
import { isRemoteChildResult, type RemoteChildRequest, type RemoteChildResult } from "./remote-child.ts";
import { shownUrl } from "../runs/index.ts";
import { childWatch, readChildStatuses, type ChildWatch } from "./child-watch.ts";
import { otherVersionsInUse, refuseMixedVersions } from "./fleet-version.ts";
import { deleteSteers, MAX_STEER_READ_BYTES, sendSteerWhileRunning, takeSteers, unreadSteers } from "./steers.ts";
import { deleteSavedSession, loadSavedSession } from "./child-sessions.ts";
import { deleteSettledInputs } from "./child-inputs.ts";
import { requeuedBecause, requeuedUnsaid, type Requeue } from "./folder-refusals.ts";
import { beatRoots, claimRoot, releaseInstance, releaseRoot, rootOf } from "./coordinator-claims.ts";
import { HEARTBEAT_MS } from "./heartbeats.ts";
import { randomUUID } from "node:crypto";
import type { Pool } from "pg";

/** How often a waiting coordinator reads its children's statuses (all in one query); the database, not a timer, decides when each ends. */
const RESULT_POLL_MS = 200;

/**
 * The longest a coordinator waits for its database to open (connect, migrate, check versions)
 * before a launch is refused: each connection and query has its own bound (dbos-load.ts), and this
 * one holds for all of them together. An open not finished by then is dropped, so the next launch
 * tries afresh.
 */
export const READY_WITHIN_MS = 30_000;

/**
 * The most of a child's answer (its result, or its error) a coordinator reads from the database:
 * anyone who can write there can forge a settled child's row, and DBOS reads a row whole, into
 * memory. A Pi child's answer, its output and its diagnostics come to far less.
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** The size of a settled child's answer row, measured by the server: nothing of it is read. */
async function answerBytes(pool: Pool, workflowId: string, dbosSchema = "dbos"): Promise<number> {
  const { rows } = await pool.query<{ bytes: string }>(
    `SELECT (COALESCE(octet_length(COALESCE(wo.output, ws.output)), 0) + COALESCE(octet_length(COALESCE(wo.error, ws.error)), 0))::bigint AS bytes
     FROM "${dbosSchema}".workflow_status ws LEFT JOIN "${dbosSchema}".workflow_output wo ON wo.workflow_uuid = ws.workflow_uuid
     WHERE ws.workflow_uuid = $1`,
    [workflowId],
  );
  return Number(rows[0]?.bytes ?? 0);
}

/** The longest a closing coordinator waits to give up its claims on runs (coordinator-claims.ts). */
const RELEASE_WITHIN_MS = 2000;

/** The DBOS client and the pool it queries through (made here, so its connections have pi-flow's bounds). */
interface Opened {
  dbos: DBOSClient;
  pool: Pool;
}

/** Why a launch stopped: the tool's abort, as abortIfSignalled says it. */
function aborted(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException("Operation aborted", "AbortError");
}

/** `work`, unless `signal` aborts or `ms` pass first: then the abort's reason, or `late()`. */
function within<T>(work: Promise<T>, signal: AbortSignal | undefined, ms: number, late: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      settle();
    };
    const onAbort = () => finish(() => reject(aborted(signal!)));
    const timer = setTimeout(() => finish(() => reject(late())), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    work.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}

/** `maxAnswerBytes`, `maxSteerBytes`: MAX_ANSWER_BYTES and MAX_STEER_READ_BYTES unless given (tests forge a smaller row). */
export function dbosCoordinator(
  databaseUrl: string,
  { maxAnswerBytes = MAX_ANSWER_BYTES, maxSteerBytes = MAX_STEER_READ_BYTES }: { maxAnswerBytes?: number; maxSteerBytes?: number } = {},
): FleetChildren {
  let opening: Promise<Opened> | undefined;
  let children: ChildWatch | undefined;
  /** pi-flow's own tables (steers, child sessions), reached without DBOS. */
  let direct: Promise<Pool> | undefined;
  const silent = () =>
    new FlowError("configuration_invalid", `The dbos backend cannot use the database ${shownUrl(databaseUrl)}: it did not answer within ${READY_WITHIN_MS / 1000} s (see docs/scale.md).`);
  const open = async (): Promise<Opened> => {
    const sdk = await loadDbos();
    await migrate(sdk, databaseUrl);
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ ...connectionOptions(databaseUrl), max: 10 });
    pool.on("error", () => undefined); // a lost connection is opened again at the next use
    try {
      return { dbos: await sdk.DBOSClient.create({ systemDatabaseUrl: dbosUrl(databaseUrl), systemDatabasePool: pool, applicationName: DBOS_APPLICATION, logger: QUIET_LOGGER }), pool };
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw unusableDatabase(databaseUrl, error);
    }
  };
  const shut = async ({ dbos, pool }: Opened) => {
    await dbos.destroy().catch(() => undefined);
    await pool.end().catch(() => undefined);
  };
  const client = (): Promise<Opened> => {
    if (opening) return opening;
    const pending = open();
    opening = pending;
    // A failed open is not cached, nor one still pending at the deadline: the next run tries again
    // (the database may be back). One that succeeds after it was dropped is closed at once.
    const drop = () => {
      if (opening === pending) opening = undefined;
    };
    const deadline = setTimeout(drop, READY_WITHIN_MS).unref();
    pending.then(
      (opened) => {
        clearTimeout(deadline);
        if (opening !== pending) void shut(opened);
      },
      () => {
        clearTimeout(deadline);
        drop();
      },
    );
    return pending;
  };
  /** The open client, unless the signal aborts or the database does not answer within READY_WITHIN_MS. */
  const answering = (signal?: AbortSignal): Promise<Opened> => within(client(), signal, READY_WITHIN_MS, silent);
  /** This coordinator's claims on the runs whose children it waits on, and how many of each wait (coordinator-claims.ts). */
  const instance = randomUUID();
  const waitingByRoot = new Map<string, number>();
  let beating: NodeJS.Timeout | undefined;
  const hold = async (pool: Pool, root: string): Promise<void> => {
    const waiting = waitingByRoot.get(root) ?? 0;
    if (waiting === 0) await claimRoot(pool, root, instance);
    waitingByRoot.set(root, (waitingByRoot.get(root) ?? 0) + 1);
    // unref: a beat never keeps a process alive on its own; the run waiting on the child does.
    beating ??= setInterval(() => void beatRoots(pool, [...waitingByRoot.keys()], instance).catch(() => undefined), HEARTBEAT_MS).unref();
  };
  const letGo = (pool: Pool, root: string): void => {
    const waiting = (waitingByRoot.get(root) ?? 1) - 1;
    if (waiting > 0) return void waitingByRoot.set(root, waiting);
    waitingByRoot.delete(root);
    if (waitingByRoot.size === 0) {
      clearInterval(beating);
      beating = undefined;
    }
    void releaseRoot(pool, root, instance).catch(() => undefined); // a claim left behind goes silent, and is taken over
  };
  const tables = async (): Promise<Pool> => {
    await answering(); // the database is migrated: pi-flow's tables exist
    direct ??= import("pg").then(({ default: pg }) => {
      const pool = new pg.Pool({ ...connectionOptions(databaseUrl), max: 1 });
      pool.on("error", () => undefined); // a lost connection is opened again at the next use
      return pool;
    });
    return direct;
  };
  /** Enqueues the child (its ID makes a retried enqueue return the same child) and waits for its answer. */
  const waitFor = async (dbos: DBOSClient, pool: Pool, request: RemoteChildRequest, signal: AbortSignal, onTaken: (worker: string) => void, onRequeued?: (requeue: Requeue) => void): Promise<RemoteChildResult> => {
    children ??= childWatch(readChildStatuses(pool), RESULT_POLL_MS);
    const handle = await dbos.enqueue<(request: RemoteChildRequest) => Promise<RemoteChildResult>>(
      { workflowName: CHILD_WORKFLOW, queueName: CHILD_QUEUE, workflowID: request.workflowId, appVersion: applicationVersion() },
      request,
    );
    // A cancel (the run's, or its time limit's) is sent until the database takes it. DBOS retries a
    // cancel sent while the database is away, but with a backoff of up to a minute, long enough for
    // a worker to run the child meanwhile: so a look that finds the database answering and the
    // child not ended sends it again at once (at most one such beside DBOS's own retry).
    let cancelWanted = false;
    let sending = 0;
    const send = () => {
      sending++;
      dbos.cancelWorkflow(request.workflowId).then(
        () => (cancelWanted = false), // taken: the next look finds the child cancelled, or ended before it
        () => undefined,
      ).finally(() => sending--);
    };
    const cancel = () => {
      cancelWanted = true;
      if (sending === 0) send();
    };
    signal.addEventListener("abort", cancel, { once: true });
    if (signal.aborted) cancel();
    // Told in the order the looks saw them: a take after a requeue waits for the requeue's reason.
    let told: Promise<void> = Promise.resolve();
    const taken = (worker: string) => void (told = told.then(() => onTaken(worker)));
    const requeued = (worker: string) => {
      const folder = request.cwd === "." ? "(the project itself)" : request.cwd;
      const why = requeuedBecause(pool, request.workflowId, worker, folder).catch(() => requeuedUnsaid(worker));
      told = told.then(async () => onRequeued?.(await why));
    };
    const watched = children.watch(
      request.workflowId,
      taken,
      (answered) => {
        if (cancelWanted && (sending === 0 || (answered && sending < 2))) send();
      },
      requeued,
    );
    let ended = false;
    try {
      const how = await watched.settled;
      await told; // what the looks saw before the end is said before the answer
      if (how === "gone") {
        throw new FlowError("failed", `The child's workflow ${request.workflowId} is no longer in the database (its row was deleted before it ended): its answer, if it had one, is lost.`);
      }
      ended = true;
      const bytes = await answerBytes(pool, request.workflowId);
      if (bytes > maxAnswerBytes) {
        throw new FlowError(
          "failed",
          `The worker's answer for ${request.workflowId} is ${bytes} bytes, over the ${maxAnswerBytes} bytes a coordinator reads: not read. Its row stays in the database's dbos.workflow_status, as it was written, for whoever looks into it.`,
        );
      }
      const answer: unknown = await handle.getResult({ pollingIntervalMs: RESULT_POLL_MS }); // ended: read at once

      if (!isRemoteChildResult(answer)) throw new FlowError("failed", `The worker's answer for ${request.workflowId} is not a child result pi-flow can read.`);
      return answer;
    } finally {
      watched.stop();
      signal.removeEventListener("abort", cancel);
      // Its prompt is of no more use, and not redacted: it goes now (child-inputs.ts). One a failed delete leaves is the sweep's.
      if (ended) await deleteSettledInputs(pool, [request.workflowId]).catch(() => undefined);
    }
  };
  return {
    label: `dbos (${shownUrl(databaseUrl)})`,
    async ready(signal) {
      await answering(signal);
    },
    async run(request: RemoteChildRequest, signal: AbortSignal, onTaken: (worker: string) => void, onRequeued?: (requeue: Requeue) => void): Promise<RemoteChildResult> {
      const { dbos, pool } = await answering(signal);
      // Checked at each child, not only at open: a coordinator open for hours (a Pi session) would
      // otherwise queue children where only another version's workers run, and none takes them.
      refuseMixedVersions(databaseUrl, applicationVersion(), await otherVersionsInUse(pool, applicationVersion()));
      const root = rootOf(request.workflowId);
      await hold(pool, root); // another live coordinator of this run: refused before anything is enqueued
      try {
        return await waitFor(dbos, pool, request, signal, onTaken, onRequeued);
      } finally {
        letGo(pool, root);
      }
    },
    async steer(workflowId, message) {
      return sendSteerWhileRunning(await tables(), workflowId, message);
    },
    async takeUndeliveredSteers(workflowId, note) {
      const pool = await tables();
      const { taken, tooLarge } = await takeSteers(pool, [workflowId], maxSteerBytes, { refusedToo: true, readOnly: true });
      if (tooLarge[0]) throw tooLarge[0]; // nothing of this child's was taken: its rows stay as written
      note(taken.map((steer) => steer.message));
      // Only once noted: a coordinator killed before leaves them for its run's resume to note.
      await deleteSteers(pool, taken).catch(() => undefined);
    },
    async unreadSteers(workflowId) {
      return unreadSteers(await tables(), workflowId, maxSteerBytes);
    },
    async takeSession(workflowId, keep) {
      const pool = await tables();
      const saved = await loadSavedSession(pool, workflowId);
      // Only once kept: a coordinator killed while writing it leaves it for its run's resume. Rows a failed delete leaves are the sweep's.
      if (keep(saved)) await deleteSavedSession(pool, workflowId).catch(() => undefined);
    },
    async close() {
      clearInterval(beating);
      beating = undefined;
      const held = waitingByRoot.size > 0;
      waitingByRoot.clear();
      const pool = direct;
      direct = undefined;
      if (pool) await (await pool).end().catch(() => undefined);
      const open = opening;
      opening = undefined;
      children = undefined;
      if (!open) return;
      // An open still under way (a database that does not answer) is not waited for: a session's
      // shutdown would wait on it for its timeouts. Once it opens, client() closes it, as dropped.
      const opened = await Promise.race([open.catch(() => undefined), new Promise<"pending">((resolve) => setImmediate(() => resolve("pending")))]);
      if (opened === undefined || opened === "pending") return;
      // Its runs may be resumed by another coordinator of this process at once; a claim a database
      // that does not answer keeps goes silent, and is taken over then.
      if (held) await within(releaseInstance(opened.pool, instance), undefined, RELEASE_WITHIN_MS, () => new Error("late")).catch(() => undefined);
      await shut(opened);
    },
  };
}
