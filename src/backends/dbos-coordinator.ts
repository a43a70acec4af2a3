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
import { shownUrl } from "./settings.ts";
import { takenWatch, type TakenWatch } from "./taken-watch.ts";

/** How often a waiting coordinator reads a child's status; the database, not a timer, decides when it ends. */
const RESULT_POLL_MS = 200;

export function dbosCoordinator(databaseUrl: string): FleetChildren {
  let opening: Promise<DBOSClient> | undefined;
  let taken: TakenWatch | undefined;
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
  return {
    label: `dbos (${shownUrl(databaseUrl)})`,
    async ready() {
      await client();
    },
    async run(request: RemoteChildRequest, signal: AbortSignal, onTaken: (worker: string) => void): Promise<RemoteChildResult> {
      const dbos = await client();
      taken ??= takenWatch((workflowIDs) => dbos.listWorkflows({ workflowIDs, loadInput: false, loadOutput: false }), RESULT_POLL_MS);
      const handle = await dbos.enqueue<(request: RemoteChildRequest) => Promise<RemoteChildResult>>(
        { workflowName: CHILD_WORKFLOW, queueName: CHILD_QUEUE, workflowID: request.workflowId, appVersion: applicationVersion() },
        request,
      );
      const cancel = () => void dbos.cancelWorkflow(request.workflowId).catch(() => undefined);
      signal.addEventListener("abort", cancel, { once: true });
      if (signal.aborted) cancel();
      const unwatch = taken.watch(request.workflowId, onTaken);
      try {
        const answer: unknown = await handle.getResult({ pollingIntervalMs: RESULT_POLL_MS });
        if (!isRemoteChildResult(answer)) throw new FlowError("failed", `The worker's answer for ${request.workflowId} is not a child result pi-flow can read.`);
        return answer;
      } finally {
        unwatch();
        signal.removeEventListener("abort", cancel);
      }
    },
    async close() {
      const open = opening;
      opening = undefined;
      taken = undefined;
      if (open) await (await open.catch(() => undefined))?.destroy();
    },
  };
}
