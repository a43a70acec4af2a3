/**
 * A pi child taken over by another worker goes on from the session its earlier worker saved
 * (src/backends/session-checkpoint.ts): from its last whole turn, with the usage of the saved turns
 * counted once in the child's total.
 */
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { Api, AssistantMessage, Model } from "@earendil-works/pi-ai";
import type { ChildUsage } from "./types.ts";
import { addMessageUsage, zeroUsage } from "./usage.ts";

export interface ContinuedSession {
  /** The saved entries up to the last whole turn. */
  entries: SessionEntry[];
  /** What the saved turns spent: the child's usage starts from it. */
  usage: ChildUsage;
  /** The saved session ends with the child's final answer: there is nothing left to ask the model. */
  answered: boolean;
}

/** Stop reasons of an assistant message that does not end a whole turn on its own. */
const UNFINISHED = new Set(["toolUse", "error", "aborted", "pending", "deferred"]);

function lastMessageAt(entries: readonly SessionEntry[]): number {
  for (let index = entries.length - 1; index >= 0; index--) if (entries[index]!.type === "message") return index;
  return -1;
}

const assistantAt = (entries: readonly SessionEntry[], index: number): AssistantMessage | undefined => {
  const entry = entries[index];
  return entry?.type === "message" && entry.message.role === "assistant" ? (entry.message as AssistantMessage) : undefined;
};

/**
 * The session to continue, or none when the saved entries hold no whole turn to go on from. An
 * assistant message that asked for tools whose results were never saved, or that failed or was cut
 * off, is dropped with what follows it: the continuing worker asks the model again from there.
 */
export function continuedSession(saved: readonly SessionEntry[], model: Model<Api> | undefined): ContinuedSession | null {
  let entries = [...saved];
  for (let last = lastMessageAt(entries); last >= 0; last = lastMessageAt(entries)) {
    const message = assistantAt(entries, last);
    if (!message || !UNFINISHED.has(message.stopReason)) break;
    entries = entries.slice(0, last);
  }
  const last = lastMessageAt(entries);
  if (last < 0) return null;
  const usage = zeroUsage();
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    if (entry.message.role === "toolResult") usage.toolCalls++;
    if (entry.message.role !== "assistant") continue;
    usage.turns++;
    addMessageUsage(usage, (entry.message as AssistantMessage).usage, model);
  }
  return { entries, usage, answered: assistantAt(entries, last) !== undefined };
}
