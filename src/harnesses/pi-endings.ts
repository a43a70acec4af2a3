import type { Api, AssistantMessage, Model } from "@earendil-works/pi-ai";
import { contentText } from "../parent-context/content-text.ts";

/**
 * Why a pi child's last model reply is no answer, in words that say what happened and what to do;
 * undefined when it is one (non-empty text, a stop the model chose). Every such ending is the
 * contract's `failed`. A cut-off answer is never delivered as the run's value: partial narration is
 * not the canonical answer (its text stays in the run's output log).
 */
export function unansweredEnding(final: AssistantMessage, model: Model<Api> | undefined): string | undefined {
  if (final.stopReason === "error") return `The child's model failed: ${final.errorMessage ?? "its provider reported an error and gave no message"}`;
  if (final.stopReason === "aborted") {
    return `The child's model request was aborted before it answered, not by a cancel or time limit of this run (by its provider or an extension): ${final.errorMessage ?? "no reason given"}`;
  }
  if (final.stopReason === "length") return cutOff(final, model);
  if (contentText(final.content).trim().length > 0) return undefined;
  const tools = final.content.flatMap((part) => (part.type === "toolCall" ? [part.name] : []));
  if (tools.length > 0) {
    return `The child's last model reply only called tools (${[...new Set(tools)].join(", ")}) and its loop ended there (a tool ended it): no answer followed.`;
  }
  if (final.content.some((part) => part.type === "thinking")) {
    return "The child's model ended its reply with only thinking, no text: there is no answer. Ask the child to state its answer as text.";
  }
  return "The child's model ended its reply with no text: there is no answer.";
}

/** A reply stopped by the token limit: how far it got, and against which limit. */
function cutOff(final: AssistantMessage, model: Model<Api> | undefined): string {
  const limit = model?.maxTokens;
  const spent = final.usage?.output;
  const name = model ? ` (${model.provider}/${model.id})` : "";
  const partial = contentText(final.content).trim().length > 0 ? " Its partial text is in the run's output, not its answer." : "";
  if (limit !== undefined && limit > 0 && spent !== undefined && spent < limit) {
    // Pi retries such a stop once after compacting the child's context; this one was not recovered.
    return `The child's answer was cut off after ${spent} output tokens, below its model's limit of ${limit}${name}: the provider stopped it early, often for lack of room in the context window, and Pi's compact-and-retry did not recover it. Give the child less context or ask for a shorter answer.${partial}`;
  }
  const at = limit !== undefined && limit > 0 ? `its model's output limit of ${limit} tokens${name}` : `its model's output limit${name}`;
  return `The child's answer was cut off at ${at}: there is no whole answer. Raise the model's output limit (maxTokens, or pick a model with a larger one), or ask for a shorter answer (or for the long part to be written to a file).${partial}`;
}
