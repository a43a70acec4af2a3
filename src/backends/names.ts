import { readFileSync } from "node:fs";

/** What pi-flow is called in DBOS: the application that owns its workflows and queue. */
export const DBOS_APPLICATION = "pi-flow";
/** The one queue every agent() child of every coordinator waits on until a worker takes it. */
export const CHILD_QUEUE = "pi-flow-children";
/** The DBOS workflow that runs one child on a worker. */
export const CHILD_WORKFLOW = "pi-flow-child";
/**
 * The longest worker name (`flow worker --name`, its DBOS executor ID): a coordinator reads no more
 * of it from the database (child-watch.ts), so two longer names alike that far would read as one.
 */
export const MAX_WORKER_NAME_CHARS = 128;

/**
 * The DBOS application version: pi-flow's own. A worker recovers, and dequeues, only the work of
 * its own version, so a fleet mixing versions never runs a child with code that did not start it.
 */
export function applicationVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return `pi-flow@${manifest.version}`;
}

/**
 * The DBOS workflow ID of a workflow run's agent() call: fixed by the run and the call's index
 * (the journal's identity of the effect), so enqueueing it twice yields the one child.
 */
export const childWorkflowId = (rootRunId: string, index: number): string => `${rootRunId}/agent/${index}`;
/**
 * The DBOS workflow ID of an `external_delegate` child: fixed by the child's run, so enqueueing it
 * twice yields the one child.
 */
export const delegateWorkflowId = (runId: string): string => `${runId}/delegate`;
