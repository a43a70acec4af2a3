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
