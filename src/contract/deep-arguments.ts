/**
 * A model's call of a pi-flow tool whose outputSchema or args nests objects thousands of levels
 * deep (a hostile model can write one in a few kilobytes) broke the user's session in Pi itself,
 * before pi-flow saw the call: Pi copies the arguments with structuredClone to validate them, and
 * the whole conversation before every later request, and V8's copy overflows its stack at about
 * 2,000 levels. From then on every turn of the session failed with "Maximum call stack size
 * exceeded". So once the model's message is final, and before Pi validates, runs or saves it, such
 * an argument of a pi-flow tool is replaced by a note saying why: Pi's validation refuses the call
 * quoting the note, and the session goes on. Other extensions' tools are left as the model wrote them.
 */
import type { AssistantMessage, ToolCall } from "@earendil-works/pi-ai";
import { TOOL_NAMES } from "./envelope.ts";

/**
 * The deepest a pi-flow tool call's argument may nest: past every pi-flow limit (an outputSchema's
 * 256 levels, a workflow's valueDepth of at most 1,000), and below the ~2,000 where V8's copy of it overflows.
 */
export const MAX_ARGUMENT_DEPTH = 1_000;

export const TOO_DEEP_ARGUMENT = `[pi-flow removed this argument: it nested objects and arrays more than ${MAX_ARGUMENT_DEPTH} levels deep, which Pi cannot copy (MAX_ARGUMENT_DEPTH); write a flatter one]`;

const FLOW_TOOLS = new Set<string>(TOOL_NAMES);

/**
 * Whether `value` nests objects and arrays more than `limit` levels; found without recursion,
 * stopping at the first that does. A look at each entry, with no copy of its keys or values: Pi
 * has just parsed the arguments, and copies them whole twice more before the call runs.
 */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<{ node: object; depth: number }> = [];
  const push = (child: unknown, depth: number) => {
    if (child !== null && typeof child === "object") stack.push({ node: child, depth });
  };
  push(value, 1);
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (depth > limit) return true;
    if (Array.isArray(node)) for (const child of node) push(child, depth + 1);
    else for (const key in node) push((node as Record<string, unknown>)[key], depth + 1);
  }
  return false;
}

function flattened(call: ToolCall): ToolCall | undefined {
  if (!FLOW_TOOLS.has(call.name)) return undefined;
  const tooDeep = Object.keys(call.arguments).filter((key) => nestsDeeperThan(call.arguments[key], MAX_ARGUMENT_DEPTH));
  if (tooDeep.length === 0) return undefined;
  const args = { ...call.arguments };
  for (const key of tooDeep) args[key] = TOO_DEEP_ARGUMENT;
  return { ...call, arguments: args };
}

/** `message` with each too deep argument of a pi-flow tool call replaced by the note, or undefined when it has none. */
export function withoutTooDeepArguments(message: { role: string }): AssistantMessage | undefined {
  if (message.role !== "assistant") return undefined;
  const assistant = message as AssistantMessage;
  let changed = false;
  const content = assistant.content.map((part) => {
    const replaced = part.type === "toolCall" ? flattened(part) : undefined;
    if (replaced === undefined) return part;
    changed = true;
    return replaced;
  });
  return changed ? { ...assistant, content } : undefined;
}
