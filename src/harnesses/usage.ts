import { calculateCost, type Api, type Model, type Usage as PiUsage } from "@earendil-works/pi-ai";
import type { ChildUsage } from "./types.ts";

/** The usage keys a run records; every one is a plain sum across turns and across children. */
export const USAGE_KEYS = ["turns", "toolCalls", "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "costUsd"] as const;

export type UsageTotals = Partial<Record<(typeof USAGE_KEYS)[number], number>>;

export function zeroUsage(): ChildUsage {
  return { turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0 };
}

/**
 * Money spent on one assistant message: what the provider reported, or else the price Pi's model
 * catalog gives for its tokens. `calculateCost` writes into the usage it is given, so it gets a copy.
 */
export function messageCostUsd(model: Model<Api> | undefined, usage: PiUsage): number {
  if (usage.cost.total > 0 || !model) return usage.cost.total;
  return calculateCost(model, { ...usage, cost: { ...usage.cost } }).total;
}

/** Adds one assistant message's tokens and cost to a child's running usage. */
export function addMessageUsage(into: ChildUsage, usage: PiUsage, model: Model<Api> | undefined): void {
  into.inputTokens += usage.input;
  into.outputTokens += usage.output;
  into.cacheReadTokens = (into.cacheReadTokens ?? 0) + usage.cacheRead;
  into.cacheWriteTokens = (into.cacheWriteTokens ?? 0) + usage.cacheWrite;
  into.costUsd = (into.costUsd ?? 0) + messageCostUsd(model, usage);
}

/** `into += from`, key by key; a key stays absent until some child reports it. */
export function addUsage(into: UsageTotals, from: UsageTotals | undefined): void {
  if (!from) return;
  for (const key of USAGE_KEYS) {
    const value = from[key];
    if (typeof value === "number") into[key] = (into[key] ?? 0) + value;
  }
}

/**
 * A run's usage in Pi's own shape, for a tool result's `usage`: Pi's session totals add it to what
 * the parent's model spent. Only the total cost is known per run, so the per-kind split is zero.
 */
export function toPiUsage(usage: UsageTotals | undefined): PiUsage | undefined {
  if (!usage) return undefined;
  const input = usage.inputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const total = usage.costUsd ?? 0;
  if (input + output + cacheRead + cacheWrite === 0 && total === 0) return undefined;
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total },
  };
}
