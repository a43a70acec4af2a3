import type { RunView } from "../contract/run-schema.ts";
import type { TaskIdentity, Usage } from "../runs/index.ts";
import { redactText } from "../runs/index.ts";

/**
 * Span attributes: OpenTelemetry's GenAI semantic conventions where they name the thing
 * (gen_ai.*), pi-flow's own under `pi_flow.*`. Every text is redacted as a run's evidence is.
 */
export type Attributes = Record<string, string | number | boolean>;

/** Span text, redacted and bounded: an attribute is for finding a run, not for reading its answer. */
export function spanText(text: string, max = 4096): string {
  const redacted = redactText(text).text;
  return redacted.length <= max ? redacted : `${redacted.slice(0, max)}…`;
}

/**
 * A model's name as a span carries it (on the agent span, and naming each turn's): redacted. A CLI
 * harness takes any name its CLI could, as the calling model wrote it, so it may be anything, a key included.
 */
export const modelName = (model: string | undefined): string | undefined => (model === undefined ? undefined : spanText(model, 200));

export function startAttributes(runId: string, kind: "agent" | "workflow", task: TaskIdentity, correlationId: string, model: string | undefined): Attributes {
  const attributes: Attributes = {
    "pi_flow.run_id": runId,
    "pi_flow.correlation_id": correlationId,
    "pi_flow.kind": kind,
    "pi_flow.description": spanText(task.description, 200),
  };
  if (kind === "agent") {
    attributes["gen_ai.operation.name"] = "invoke_agent";
    attributes["gen_ai.agent.name"] = task.role ?? task.subagentType ?? "agent";
  }
  if (task.role !== undefined) attributes["pi_flow.role"] = task.role;
  if (task.subagentType !== undefined) attributes["pi_flow.subagent_type"] = task.subagentType;
  if (task.harness !== undefined) attributes["pi_flow.harness"] = task.harness;
  if (task.workflow !== undefined) attributes["pi_flow.workflow"] = task.workflow;
  if (task.parentRunId !== undefined) attributes["pi_flow.parent_run_id"] = task.parentRunId;
  if (task.resumedFrom !== undefined) attributes["pi_flow.resumed_from"] = task.resumedFrom;
  if (model !== undefined) attributes["gen_ai.request.model"] = model;
  return attributes;
}

export function usageAttributes(usage: Usage | undefined): Attributes {
  const attributes: Attributes = {};
  if (!usage) return attributes;
  if (usage.inputTokens !== undefined) attributes["gen_ai.usage.input_tokens"] = usage.inputTokens;
  if (usage.outputTokens !== undefined) attributes["gen_ai.usage.output_tokens"] = usage.outputTokens;
  if (usage.cacheReadTokens !== undefined) attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cacheReadTokens;
  if (usage.cacheWriteTokens !== undefined) attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cacheWriteTokens;
  if (usage.turns !== undefined) attributes["pi_flow.turns"] = usage.turns;
  if (usage.toolCalls !== undefined) attributes["pi_flow.tool_calls"] = usage.toolCalls;
  if (usage.costUsd !== undefined) attributes["pi_flow.cost_usd"] = usage.costUsd;
  return attributes;
}

export function endAttributes(view: RunView): Attributes {
  const attributes: Attributes = { ...usageAttributes(view.usage), "pi_flow.outcome": view.state.outcome ?? view.state.status };
  if (view.state.error) {
    attributes["pi_flow.error.code"] = view.state.error.code;
    attributes["error.type"] = view.state.error.code;
  }
  if (view.children) {
    attributes["pi_flow.children"] = view.children.count;
    if (view.children.failed !== undefined) attributes["pi_flow.children_failed"] = view.children.failed;
  }
  return attributes;
}
