import { FlowError } from "../contract/errors.ts";
import type { ParentSnapshot, SnapshotMessage } from "./snapshot.ts";

export type ContextRequest = { mode: "none" } | { mode: "recent"; turns: number } | { mode: "full" };

/** The most turns `recent` may ask for; more is almost certainly a mistake for `full`. */
export const MAX_RECENT_TURNS = 1000;

/**
 * The most characters of the parent's conversation a child's prompt may carry: about a million
 * tokens, more than a model's window holds. Past it the child could not read it anyway, and every
 * such child would carry it in its prompt and its run's journal; cutting it silently would hide
 * what the child never saw, so a larger one is refused.
 */
export const MAX_CONTEXT_CHARS = 4 * 1024 * 1024;

/** Checks a context request before anything launches (context_invalid names what is wrong). */
export function checkContextRequest(request: unknown): ContextRequest {
  const candidate = request as { mode?: unknown; turns?: unknown } | undefined;
  if (candidate === undefined) return { mode: "none" };
  const extra = Object.keys(candidate).filter((key) => key !== "mode" && key !== "turns");
  if (extra.length > 0) throw new FlowError("context_invalid", `Unknown context field ${extra.join(", ")}.`);
  switch (candidate.mode) {
    case "none":
    case "full":
      if (candidate.turns !== undefined) {
        throw new FlowError("context_invalid", `turns goes with mode "recent", not "${candidate.mode}".`);
      }
      return { mode: candidate.mode };
    case "recent": {
      const turns = candidate.turns;
      if (typeof turns !== "number" || !Number.isInteger(turns) || turns < 1 || turns > MAX_RECENT_TURNS) {
        throw new FlowError("context_invalid", `mode "recent" needs turns, a whole number from 1 to ${MAX_RECENT_TURNS}.`);
      }
      return { mode: "recent", turns };
    }
    default:
      throw new FlowError("context_invalid", `Unknown context mode ${JSON.stringify(candidate.mode)}; use none, recent or full.`);
  }
}

/** Selects what a child sees from the frozen snapshot. `none` is nothing at all. */
export function selectContext(snapshot: ParentSnapshot, request: ContextRequest): readonly SnapshotMessage[] {
  switch (request.mode) {
    case "none":
      return [];
    case "full":
      return snapshot.turns.flat();
    case "recent":
      return snapshot.turns.slice(-request.turns).flat();
  }
}

/**
 * A line of the parent's words shaped like one of renderMessage's markers. A file the parent read
 * holding "[user]" on a line of its own would otherwise read as a message of the user's.
 */
const MARKER_LINE = /^(?=[ \t]*\[(?:user|assistant|note|called .*|result of .*)\][ \t]*\r?$)/gm;

/** A message's text with marker-shaped lines escaped (`\[user]`), so markers stay renderMessage's own. */
const ownWords = (text: string) => text.replace(MARKER_LINE, "\\");

function renderMessage(message: SnapshotMessage): string {
  const text = ownWords(message.text);
  switch (message.role) {
    case "user":
      return `[user]\n${text}`;
    case "assistant": {
      // A call's arguments are JSON on one line: they cannot start a line of their own.
      const calls = (message.toolCalls ?? []).map((call) => `[called ${call}]`);
      return ["[assistant]", text, ...calls].filter((line) => line.length > 0).join("\n");
    }
    case "toolResult":
      return `[result of ${message.toolName}]\n${text}`;
    case "custom":
      return `[note]\n${text}`;
  }
}

/**
 * The block's own delimiters, wherever the parent's words hold them: a file the parent read or a
 * page it fetched could otherwise close the quoted conversation and open a `<task>` of its own.
 */
const DELIMITER = /<(\/?)(parent_conversation|task)(?=[\s/>]|$)/gi;

/** The parent's words with any delimiter tag in them made plain text (`&lt;task>`), so it delimits nothing. */
const quoted = (text: string) => text.replace(DELIMITER, "&lt;$1$2");

/**
 * Renders selected context as one delimited text block. Text works for every harness (an external
 * CLI cannot take Pi messages) and keeps the parent's words visibly apart from the child's task.
 */
export function renderContext(messages: readonly SnapshotMessage[], capturedAt: string): string {
  if (messages.length === 0) return "";
  const text = [
    `<parent_conversation captured_at="${capturedAt}">`,
    "This is the conversation of the agent that delegated to you, for context only. Your task follows after it.",
    ...messages.map((message) => quoted(renderMessage(message))),
    "</parent_conversation>",
  ].join("\n\n");
  if (text.length > MAX_CONTEXT_CHARS) {
    throw new FlowError(
      "context_invalid",
      `The parent's conversation for this context is ${text.length} characters, over the ${MAX_CONTEXT_CHARS} a child may be given: ask for fewer recent turns, or none and put what the child needs in its prompt.`,
    );
  }
  return text;
}

/** Rendered selections of each snapshot, by selection: every child of a call selects from one frozen snapshot. */
const renderedSelections = new WeakMap<ParentSnapshot, Map<string, string>>();

/**
 * renderContext of selectContext, rendered once per snapshot and selection: a workflow's two hundred
 * `full` children share one text instead of escaping and joining the parent's conversation two
 * hundred times (about 2 ms each for a 280 KB conversation).
 */
export function renderedContext(snapshot: ParentSnapshot, request: ContextRequest): string {
  const key = request.mode === "recent" ? `recent:${request.turns}` : request.mode;
  let bySelection = renderedSelections.get(snapshot);
  if (!bySelection) renderedSelections.set(snapshot, (bySelection = new Map()));
  const known = bySelection.get(key);
  if (known !== undefined) return known;
  const text = renderContext(selectContext(snapshot, request), snapshot.capturedAt);
  bySelection.set(key, text);
  return text;
}
