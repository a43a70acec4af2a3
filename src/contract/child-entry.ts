// The wire shape of one workflow child as progress reports carry it: the widget, the run row and
// the flow command's progress lines all read it, so it belongs to the contract, not to the engine.
import type { RunView } from "./run-schema.ts";

export type ChildStatus = "running" | "succeeded" | "failed" | "cancelled" | "timed_out";

/** One indexed child as progress reports show it. */
export interface ChildEntry {
  index: number;
  runId: string;
  description: string;
  status: ChildStatus;
  /** Epoch milliseconds: when agent() launched it, and when it settled. */
  startedAt?: number;
  endedAt?: number;
  /** What it is doing now ("thinking", "calling read"), from its harness. */
  activity?: string;
  /** The last line of output it wrote, at most 200 characters. */
  lastOutput?: string;
  usage?: RunView["usage"];
  /** Why a child that did not succeed ended, as its run's error says. */
  error?: string;
}

/**
 * The activity of a child whose run is `queued` on the dbos backend: no `flow worker` has taken it
 * yet (docs/scale.md). Its entry's status stays `running` (not settled); its run's status is `queued`.
 */
export const WAITING_FOR_WORKER = "queued: waiting for a worker";

/** The activity of a child a worker took and gave back, until the next worker takes it: `queued again: <brief why>`. */
export const requeuedActivity = (brief: string): string => `${REQUEUED} ${brief}`;
const REQUEUED = "queued again:";

/** A child that waits for a worker, as a progress report shows it. */
export const waitsForWorker = (child: ChildEntry): boolean =>
  child.status === "running" && (child.activity === WAITING_FOR_WORKER || (child.activity?.startsWith(REQUEUED) ?? false));

/** How a progress line names a child waiting for a worker: `queued`, or `queued again: <brief why>`. */
export const queuedLabel = (child: ChildEntry): string => (child.activity?.startsWith(REQUEUED) ? child.activity : "queued");
