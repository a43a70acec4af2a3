import { buildSessionProjection, type SessionEntry } from "@earendil-works/pi-coding-agent";
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

type ContextMessage = ReturnType<typeof buildSessionProjection>["messages"][number];

function toSnapshotMessage(entry: ContextMessage): SnapshotMessage | undefined {
  const message = entry as { role: string; content?: unknown; toolName?: string; summary?: string; command?: string; output?: string; excludeFromContext?: boolean };
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
    case "compactionSummary":
      return { role: "custom", text: `Summary of the earlier conversation:\n${message.summary ?? ""}` };
    case "branchSummary":
      return { role: "custom", text: `Summary of a branch the conversation came back from:\n${message.summary ?? ""}` };
    case "bashExecution":
      // `!!` commands stay out of the parent's own context, so out of the child's too.
      return message.excludeFromContext ? undefined : { role: "custom", text: `The user ran \`${message.command ?? ""}\`:\n${message.output ?? ""}` };
    default:
      // System messages describe the parent's own prompt and tools, not the conversation.
      return undefined;
  }
}

/**
 * What a message keeps, read in order: the orchestrator passes runs' PrintedSecretResults, which
 * takes the secret a command printed out of the tool result apart from its call.
 */
export interface KeptMessages {
  message<T>(message: T): T;
}

const hasToolCall = (message: SnapshotMessage) => message.role === "assistant" && (message.toolCalls?.length ?? 0) > 0;

/**
 * Captures the parent's branch once, when a Flow call starts. The branch then ends with the
 * assistant message that holds the pending tool call; it and anything after it (results of
 * sibling calls in the same batch) are left out, so a child never sees the call that made it.
 * The snapshot is deep-frozen: every child of the call selects from the same words.
 *
 * The words are those the parent's model sees, as Pi projects the branch for it: after a
 * compaction its summary and the kept entries, not what it summarised; a message a context edit
 * removed (a pasted key taken back, say) or replaced, as the edit left it; custom messages too.
 * The raw entries would hand a child what the parent itself no longer has.
 */
export function captureParentSnapshot(branch: readonly SessionEntry[], now: Date = new Date(), kept: KeptMessages = { message: (message) => message }): ParentSnapshot {
  const leaf = branch.at(-1);
  const projected = leaf ? buildSessionProjection([...branch], leaf.id).messages : [];
  const messages = projected
    .map((message) => toSnapshotMessage(kept.message(message)))
    .filter((message): message is SnapshotMessage => message !== undefined);
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
