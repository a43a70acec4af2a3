import { usageAmount, type RunView } from "../contract/run-schema.ts";
import type { ReportRun } from "./collect.ts";
import { textOf } from "./escape.ts";

export interface ReportTotals {
  agents: number;
  workflows: number;
  outcomes: Record<string, number>;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  turns: number;
  toolCalls: number;
}

/** Outcome, or the state of a run that has none yet. */
export const stateOf = (view: RunView): string => textOf(view.state.outcome ?? view.state.status);


/** Sums over the agent runs (a workflow's own usage already sums its children). */
export function totalsOf(runs: readonly ReportRun[]): ReportTotals {
  // No prototype: an outcome a record names "constructor" or "__proto__" is counted as any other.
  const outcomes = Object.create(null) as Record<string, number>;
  const totals: ReportTotals = { agents: 0, workflows: 0, outcomes, inputTokens: 0, outputTokens: 0, costUsd: 0, turns: 0, toolCalls: 0 };
  for (const { view } of runs) {
    const state = stateOf(view);
    totals.outcomes[state] = (totals.outcomes[state] ?? 0) + 1;
    if (view.kind === "workflow") {
      totals.workflows++;
      continue;
    }
    totals.agents++;
    const usage = view.usage ?? {};
    totals.inputTokens += usageAmount(usage.inputTokens);
    totals.outputTokens += usageAmount(usage.outputTokens);
    totals.costUsd += usageAmount(usage.costUsd);
    totals.turns += usageAmount(usage.turns);
    totals.toolCalls += usageAmount(usage.toolCalls);
  }
  return totals;
}

/** Dollars to a hundredth of a cent: one child's cost is often under a cent. */
export const formatCost = (usd: unknown): string => `$${usageAmount(usd).toFixed(4)}`;

export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return "…";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.floor((ms % 60_000) / 1000)} s`; // floor: 119.6 s is 1 min 59 s, not 1 min 60 s
}
