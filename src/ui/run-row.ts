/**
 * What a run tool's row remembers between renders. Pi calls the call and result renderers on
 * every update; this state keeps the newest details, and once the final result arrived it is never
 * replaced by an update that comes later. While the run goes, a one-second tick redraws the row so
 * its elapsed time moves.
 */
import type { ServedRunView } from "../contract/run-schema.ts";
import type { ChildProgress } from "../harnesses/index.ts";
import type { ChildEntry } from "../contract/child-entry.ts";
import { isChildEntry, isChildProgress, isRunView } from "./shapes.ts";

/** What external_delegate and external_workflow put in `details` (a superset of both). */
export interface RunDetails {
  runId?: string;
  phase: "rejected" | "running" | "accepted" | "settled";
  progress?: ChildProgress;
  children?: readonly ChildEntry[];
  run?: ServedRunView;
}

export interface RunRowState {
  details?: RunDetails;
  /** The last children a workflow reported: the tree stays after the run settles. */
  children?: readonly ChildEntry[];
  /** The final result arrived: later partial updates are ignored. */
  final?: boolean;
  isError?: boolean;
  /** When this row first saw the call executing (epoch ms), for elapsed time while it runs. */
  startedAt?: number;
  /** Pi's measured execution time of the final result. */
  durationMs?: number;
  /** The rejection text when a call failed before it made a run. */
  rejection?: string;
  /** A final result that came without details (another host, a replaced result): its text is all there is to show. */
  plainText?: string;
  /** A progress update's text while no details came with any: shown until the final result. */
  partialText?: string;
  tick?: NodeJS.Timeout;
}

export interface ResultUpdate {
  details: unknown;
  text: string;
  isPartial: boolean;
  isError: boolean;
  durationMs: number | undefined;
  invalidate(): void;
}

function isRunDetails(value: unknown): value is RunDetails {
  if (typeof value !== "object" || value === null) return false;
  const { phase, run, children, progress } = value as Record<string, unknown>;
  return (
    typeof phase === "string" &&
    (run === undefined || isRunView(run)) &&
    (children === undefined || (Array.isArray(children) && children.every(isChildEntry))) &&
    (progress === undefined || isChildProgress(progress))
  );
}

export function markStarted(state: RunRowState, executionStarted: boolean, now = Date.now()): void {
  if (executionStarted) state.startedAt ??= now;
}

/** Applies one result update; returns false when it came after the final result and was dropped. */
export function applyResult(state: RunRowState, update: ResultUpdate, now = Date.now()): boolean {
  if (state.final && update.isPartial) return false;
  state.startedAt ??= now;
  const details = isRunDetails(update.details) ? update.details : undefined;
  if (details) {
    state.details = details;
    if (details.children) state.children = details.children;
  }
  if (update.isPartial) {
    if (!details && !state.details) state.partialText = update.text;
    state.tick ??= setInterval(update.invalidate, 1000).unref();
    return true;
  }
  state.final = true;
  delete state.partialText;
  state.isError = update.isError;
  state.durationMs = update.durationMs;
  if (details?.phase === "rejected" || (!details && update.isError)) state.rejection = update.text;
  else if (!details && !state.details) state.plainText = update.text;
  if (state.tick) clearInterval(state.tick);
  delete state.tick;
  return true;
}
