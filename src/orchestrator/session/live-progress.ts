/**
 * The latest progress of each background run, for the widget and `/flow runs`. A background
 * run's tool call has returned, so its updates have no tool row to go to; they land here instead.
 * Kept per process (runs are), dropped when a run leaves the session's background set, and
 * bounded to the most recent runs.
 */
import type { ChildProgress } from "../../harnesses/index.ts";
import type { ChildEntry } from "../../contract/child-entry.ts";
import { processGlobal } from "../../../runtime/process-global.ts";

export interface LiveProgress {
  /** A workflow's children, as its last progress report listed them. */
  children?: readonly ChildEntry[];
  /** A single child's activity and usage so far. */
  progress?: ChildProgress;
}

function board(): Map<string, LiveProgress> {
  return processGlobal("pi-flow.live-progress", () => new Map<string, LiveProgress>());
}

/** Runs remembered at most; without a widget to forget settled runs, the oldest go first. */
const MAX_RUNS = 200;

export function noteProgress(runId: string | undefined, update: LiveProgress): void {
  if (!runId) return;
  const runs = board();
  const previous = runs.get(runId);
  runs.delete(runId);
  runs.set(runId, { ...previous, ...update });
  if (runs.size > MAX_RUNS) runs.delete(runs.keys().next().value!);
}

export function liveProgress(runId: string): LiveProgress | undefined {
  return board().get(runId);
}

export function forgetProgress(runId: string): void {
  board().delete(runId);
}
