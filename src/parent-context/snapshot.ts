import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { contentText } from "./content-text.ts";

/** One message of the parent conversation as a child may see it: plain text, by role. */
export interface SnapshotMessage {
  role: "user" | "assistant" | "toolResult" | "custom";
  text: string;
  /** Assistant messages: the tools it called, as `name(args)` lines. */
  toolCalls?: string[];
  /** toolResult messages: the tool's name. */
  toolName?: string;
}

/** A turn starts at a user message and holds everything up to the next one. */
export interface ParentSnapshot {
  readonly capturedAt: string;
  readonly turns: readonly (readonly SnapshotMessage[])[];
}

type ContentPart = { type: string; name?: string; arguments?: unknown };

const textOf = (content: unknown) => contentText(content, { separator: "\n", images: true });

function toSnapshotMessage(entry: SessionEntry): SnapshotMessage | undefined {
  if (entry.type !== "message") return undefined;
  const message = entry.message as { role: string; content: unknown; toolName?: string; customType?: string };
  switch (message.role) {
    case "user":
      return { role: "user", text: textOf(message.content) };
    case "assistant": {
      const parts = Array.isArray(message.content) ? (message.content as ContentPart[]) : [];
      const toolCalls = parts
        .filter((part) => part.type === "toolCall")
        .map((part) => `${part.name ?? "tool"}(${JSON.stringify(part.arguments ?? {})})`);
      return { role: "assistant", text: textOf(message.content), ...(toolCalls.length > 0 ? { toolCalls } : {}) };
    }
    case "toolResult":
      return { role: "toolResult", text: textOf(message.content), toolName: message.toolName ?? "tool" };
    case "custom":
      return { role: "custom", text: textOf(message.content) };
    default:
      // System messages describe the parent's own prompt and tools, not the conversation.
      return undefined;
  }
}

const hasToolCall = (message: SnapshotMessage) => message.role === "assistant" && (message.toolCalls?.length ?? 0) > 0;

/**
 * Captures the parent's branch once, when a Flow call starts. The branch then ends with the
 * assistant message that holds the pending tool call; it and anything after it (results of
 * sibling calls in the same batch) are left out, so a child never sees the call that made it.
 * The snapshot is deep-frozen: every child of the call selects from the same words.
 */
export function captureParentSnapshot(branch: readonly SessionEntry[], now: Date = new Date()): ParentSnapshot {
  const messages = branch.map(toSnapshotMessage).filter((message): message is SnapshotMessage => message !== undefined);
  let end = messages.length;
  for (let index = messages.length - 1; index >= 0; index--) {
    if (hasToolCall(messages[index]!)) {
      end = index;
      break;
    }
    if (messages[index]!.role === "user") break;
  }
  const turns: SnapshotMessage[][] = [];
  for (const message of messages.slice(0, end)) {
    if (message.role === "user" || turns.length === 0) turns.push([]);
    turns[turns.length - 1]!.push(message);
  }
  return deepFreeze({ capturedAt: now.toISOString(), turns });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
