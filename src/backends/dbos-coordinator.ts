/**
 * The coordinating side of the dbos backend: each agent() child becomes a DBOS workflow on the
 * shared queue, with the fixed ID `<rootRunId>/agent/<index>`, and the coordinator waits for its
 * result. It never runs a child itself: it uses DBOSClient, which enqueues and reads but does not
 * dequeue, so only `flow worker`s take children.
 */
import type { DBOSClient } from "@dbos-inc/dbos-sdk";
import { FlowError } from "../contract/errors.ts";
import { loadDbos, migrate, QUIET_LOGGER, unusableDatabase } from "./dbos-load.ts";
import type { FleetChildren } from "./fleet.ts";
import { applicationVersion, CHILD_QUEUE, CHILD_WORKFLOW, DBOS_APPLICATION } from "./names.ts";
import { isRemoteChildResult, type RemoteChildRequest, type RemoteChildResult } from "./remote-child.ts";
import { shownUrl } from "../runs/index.ts";
import { childWatch, type ChildWatch } from "./child-watch.ts";
import { sendSteer } from "./steers.ts";
import { deleteSavedSession, loadSavedSession } from "./child-sessions.ts";
import type { Pool } from "pg";

/** How often a waiting coordinator reads its children's statuses (all in one query); the database, not a timer, decides when each ends. */
const RESULT_POLL_MS = 200;

export function dbosCoordinator(databaseUrl: string): FleetChildren {
  let opening: Promise<DBOSClient> | undefined;
  let children: ChildWatch | undefined;
  /** pi-flow's own tables (steers, child sessions), reached without DBOS. */
  let direct: Promise<Pool> | undefined;
  const client = (): Promise<DBOSClient> => {
    opening ??= (async () => {
      const sdk = await loadDbos();
      await migrate(sdk, databaseUrl);
      try {
        return await sdk.DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION, logger: QUIET_LOGGER });
      } catch (error) {
        throw unusableDatabase(databaseUrl, error);
      }
    })();
    // A failed open is not cached: the next run tries again (the database may be back).
    opening.catch(() => (opening = undefined));
    return opening;
  };
  const tables = async (): Promise<Pool> => {
    await client(); // the database is migrated: pi-flow's tables exist
    direct ??= import("pg").then(({ default: pg }) => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
      pool.on("error", () => undefined); // a lost connection is opened again at the next use
      return pool;
    });
    return direct;
  };
  return {
    label: `dbos (${shownUrl(databaseUrl)})`,
    async ready() {
      await client();
    },
    async run(request: RemoteChildRequest, signal: AbortSignal, onTaken: (worker: string) => void): Promise<RemoteChildResult> {
      const dbos = await client();
      children ??= childWatch((workflowIDs) => dbos.listWorkflows({ workflowIDs, loadInput: false, loadOutput: false }), RESULT_POLL_MS);
      const handle = await dbos.enqueue<(request: RemoteChildRequest) => Promise<RemoteChildResult>>(
        { workflowName: CHILD_WORKFLOW, queueName: CHILD_QUEUE, workflowID: request.workflowId, appVersion: applicationVersion() },
        request,
      );
      const cancel = () => void dbos.cancelWorkflow(request.workflowId).catch(() => undefined);
      signal.addEventListener("abort", cancel, { once: true });
      if (signal.aborted) cancel();
      const watched = children.watch(request.workflowId, onTaken);
      try {
        await watched.settled;
        const answer: unknown = await handle.getResult({ pollingIntervalMs: RESULT_POLL_MS }); // ended: read at once

        if (!isRemoteChildResult(answer)) throw new FlowError("failed", `The worker's answer for ${request.workflowId} is not a child result pi-flow can read.`);
        return answer;
      } finally {
        watched.stop();
        signal.removeEventListener("abort", cancel);
      }
    },
    async steer(workflowId, message) {
      await sendSteer(await tables(), workflowId, message);
    },
    async takeSession(workflowId) {
      const pool = await tables();
      const saved = await loadSavedSession(pool, workflowId);
      // Read is what counts: rows a failed delete leaves are the sweep's.
      await deleteSavedSession(pool, workflowId).catch(() => undefined);
      return saved;
    },
    async close() {
      const pool = direct;
      direct = undefined;
      if (pool) await (await pool).end().catch(() => undefined);
      const open = opening;
      opening = undefined;
      children = undefined;
      if (open) await (await open.catch(() => undefined))?.destroy();
    },
  };
}
