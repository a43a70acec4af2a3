import type { RunOutcome, RunView } from "../../contract/run-schema.ts";
import type { RunKind } from "../ids.ts";
import type { ChangeStats, ChildCounts, RunError, TaskIdentity, Usage } from "../journal/journal.ts";

/** Named moments of the write path; crash tests stop a writer at them. */
export type WritePoint = "created" | "final-written" | "terminal-written" | "record-before-rename" | "settled";

export interface WriterHooks {
  at?(point: WritePoint, runId: string): void;
}

export interface CreateRunInput {
  kind: RunKind;
  task: TaskIdentity;
  background: boolean;
  /** Private launch details (harness, model, prompt, limits…): the `launch` view only, never a RunView. */
  launch?: Record<string, unknown>;
  /** `queued` until the owner calls `markRunning()`; default `running`. */
  status?: "queued" | "running";
}

export interface SettleInput {
  outcome: RunOutcome;
  /** The canonical result; kept only for `succeeded`. `undefined` means there is none. */
  value?: unknown;
  /** The child answered under an output schema: store its value as JSON text. */
  structured?: boolean;
  error?: RunError;
  usage?: Usage;
  children?: ChildCounts;
  /** Worktree isolation: what the child changed, kept on its ref. */
  changes?: ChangeStats;
}

export interface SettleResult {
  view: RunView;
  /**
   * A succeeded run's value as it was saved, redacted (absent when it has none): for a caller that
   * hands the value on, so it is not redacted a second time.
   */
  value?: unknown;
  /** Receipt warnings, e.g. `output_redacted` when redaction changed an inlined value. */
  warnings: string[];
  /** Evidence writes that failed along the way; the run's result stands regardless. */
  evidenceErrors: string[];
}
