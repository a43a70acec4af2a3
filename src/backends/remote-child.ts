/**
 * What crosses the wire between a coordinator and a `flow worker` for one agent() child: the
 * request (everything the harness needs, all of it JSON) and the result (the harness's answer
 * plus the evidence the worker saw). Both are checked at run time on arrival: the database is a
 * process boundary, and a row written by another version or by hand must not crash a worker. The
 * check is of shape only: a worker runs the tools, prompt and folder the row names (it cannot know
 * the parent's bound), which is why the database must be the fleet's alone (docs/scale.md). The
 * worker does check that `workflowId` is the DBOS workflow's own ID (dbos-worker.ts).
 */
import type { ChildProfile, ChildQuotas, ChildDiagnostic, ChildResult, ChildTask } from "../harnesses/index.ts";

export interface RemoteChildRequest {
  /** The DBOS workflow ID: `<rootRunId>/agent/<index>`. */
  workflowId: string;
  /** The child's run ID in the coordinator's store, where its evidence lives. */
  runId: string;
  harness: string;
  /** `provider/id` of the child's model as the coordinator resolved it; null when it needs none. */
  model: string | null;
  profile: ChildProfile;
  task: ChildTask;
  prompt: string;
  /** The child's folder relative to the coordinator's project: each worker maps it onto its own checkout. */
  cwd: string;
  loading: { projectTrusted: boolean; isolated: boolean };
  outputSchema?: Record<string, unknown>;
  quotas?: ChildQuotas;
  /** The coordinator's span of the child's run (W3C trace context), when it traces: the worker's spans go under it. */
  traceparent?: string;
  /** The correlation ID of the child's run (its line of work), for the worker's spans. */
  correlationId?: string;
}

export interface RemoteChildResult {
  result: ChildResult;
  /** The child's assistant text, message by message, as the harness wrote it (the coordinator redacts it). */
  output: string[];
  diagnostics: ChildDiagnostic[];
  /** The worker that ran it, as `flow worker` names itself. */
  worker: string;
  /** A child that checkpointed its Pi session: what the worker left of it for the coordinator to keep. */
  session?: StoredSession;
}

/**
 * How much of a settled pi child's Pi session a worker left in pi_flow.child_sessions: all of it
 * (`entries` rows, for the coordinator to copy into the child's run and delete), or none, and why.
 */
export type StoredSession = { entries: number } | { unsaved: string };

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
const OUTCOMES = new Set(["succeeded", "failed", "cancelled", "timed_out"]);

export function isRemoteChildRequest(value: unknown): value is RemoteChildRequest {
  if (!isObject(value)) return false;
  const { workflowId, runId, harness, model, profile, task, prompt, cwd, loading, traceparent, correlationId } = value;
  return (
    (traceparent === undefined || typeof traceparent === "string") &&
    (correlationId === undefined || typeof correlationId === "string") &&
    typeof workflowId === "string" &&
    typeof runId === "string" &&
    typeof harness === "string" &&
    (model === null || typeof model === "string") &&
    isObject(profile) &&
    typeof profile.name === "string" &&
    isObject(task) &&
    typeof task.agent === "string" &&
    typeof task.description === "string" &&
    typeof prompt === "string" &&
    typeof cwd === "string" &&
    isObject(loading) &&
    typeof loading.projectTrusted === "boolean" &&
    typeof loading.isolated === "boolean"
  );
}

const isStoredSession = (value: unknown): value is StoredSession =>
  isObject(value) && (Number.isInteger(value.entries) || typeof value.unsaved === "string");

const isCount = (value: unknown): boolean => typeof value === "number" && Number.isFinite(value) && value >= 0;

/** Usage the coordinator adds into its runs' and workflows' totals: numbers, or a forged row would turn a sum into a string. */
const isUsage = (value: unknown): boolean =>
  isObject(value) &&
  [value.turns, value.toolCalls, value.inputTokens, value.outputTokens].every(isCount) &&
  // null: a NaN the worker's JSON wrote as such (a price it could not work out), not worth refusing the answer over.
  [value.cacheReadTokens, value.cacheWriteTokens, value.costUsd].every((field) => field === undefined || field === null || isCount(field));

const isChildError = (value: unknown): boolean => value === undefined || (isObject(value) && typeof value.code === "string" && typeof value.message === "string");

export function isRemoteChildResult(value: unknown): value is RemoteChildResult {
  if (!isObject(value) || !isObject(value.result) || !isUsage(value.result.usage)) return false;
  const { result, output, diagnostics, worker, session } = value;
  return (
    (session === undefined || isStoredSession(session)) &&
    isChildError(result.error) &&
    typeof result.outcome === "string" &&
    OUTCOMES.has(result.outcome) &&
    Array.isArray(output) &&
    output.every((text) => typeof text === "string") &&
    Array.isArray(diagnostics) &&
    diagnostics.every((entry) => isObject(entry) && typeof entry.type === "string") &&
    typeof worker === "string"
  );
}
