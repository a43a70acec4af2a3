/**
 * Per-child quotas. They fail closed: the first turn or tool call past a limit stops the child,
 * and the run fails with a message that names the quota. Every harness counts the same things: a
 * turn is one model request (with the tool calls it asks for), a tool call is one call the child
 * starts.
 */
export interface ChildQuotas {
  maxTurns?: number;
  maxToolCalls?: number;
}

/** What a harness has seen the child start so far. */
export interface QuotaCounts {
  turns: number;
  toolCalls: number;
}

/** The message of the first quota the counts exceed, or undefined while they are within them. */
export function quotaBreach(quotas: ChildQuotas | undefined, counts: QuotaCounts): string | undefined {
  if (quotas?.maxTurns !== undefined && counts.turns > quotas.maxTurns) {
    return `The child exceeded its quota maxTurns (${quotas.maxTurns}): it started turn ${counts.turns} and was stopped.`;
  }
  if (quotas?.maxToolCalls !== undefined && counts.toolCalls > quotas.maxToolCalls) {
    return `The child exceeded its quota maxToolCalls (${quotas.maxToolCalls}): it started tool call ${counts.toolCalls} and was stopped.`;
  }
  return undefined;
}
