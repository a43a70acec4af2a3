// The globals a workflow script sees besides the helpers. Nothing else is there: no timers,
// fetch, require, process, WebAssembly or import().
import type { GlobalDoc } from "./types.ts";

export const SCRIPT_GLOBALS: readonly GlobalDoc[] = [
  {
    name: "agent",
    kind: "function",
    signature: "agent(options: AgentOptions): Promise<AgentResult>",
    description:
      "Starts one child. Rejects with a FlowError carrying `code` and `runId` when the child fails, is cancelled or " +
      "times out (catchable). The call limit, an unknown role and a stopped root end the run even if caught. Extra " +
      "calls beyond the concurrency limit queue. Options over callArgsChars, or an answer over replyChars, reject with " +
      "a RangeError whose code names the limit.",
  },
  {
    name: "tools",
    kind: "const",
    signature: "tools: FlowTools",
    description:
      "The host tools this workflow may call: `await tools.external_runs({...})`. A tool with an output schema " +
      "resolves to its structured result; a host failure rejects with a FlowError carrying `code`. Naming a tool " +
      "that is not available throws a TypeError. Calls past the concurrency limit queue; callArgsChars and replyChars " +
      "apply as to agent().",
  },
  {
    name: "describeTool",
    kind: "function",
    signature: "describeTool(name: string): Promise<string | undefined>",
    description:
      "The description and TypeScript declaration (input and result types) of a tool this workflow may call, as " +
      "Pi's codemode gives them; undefined for any other name.",
  },
  {
    name: "searchTools",
    kind: "function",
    signature: "searchTools(query: string, options?: { limit?: number }): Promise<FlowToolMatch[]>",
    description:
      "The tools this workflow may call that match the query (ranked by BM25 over names, descriptions and argument " +
      "names; default limit 8), each with what describeTool() returns for it.",
  },
  {
    name: "args",
    kind: "const",
    signature: "args: Readonly<WorkflowArgs>",
    description: "The validated arguments (meta.args is their JSON Schema), as a frozen deep copy.",
  },
  {
    name: "store",
    kind: "function",
    signature: "store(key: string, value: unknown): void",
    description:
      "Keeps a JSON copy of value for this run (journaled, never sent to children). store(key, undefined) deletes. " +
      "Throws a RangeError whose code names the limit hit: storeValueChars, storeTotalChars, storeWrites (calls per " +
      "run, deletes included) or storeWriteChars (characters written per run).",
  },
  {
    name: "load",
    kind: "function",
    signature: "load<T = unknown>(key: string): T | undefined",
    description: "A fresh JSON copy of a stored value, or undefined.",
  },
  {
    name: "text",
    kind: "function",
    signature: "text(value: unknown): void",
    description: "Appends value to the run's output as is (non-strings as JSON). Output is capped by outputChars.",
  },
  {
    name: "console",
    kind: "const",
    signature: "console: FlowConsole",
    description: "console.log/info/warn/error/debug append one line each to the run's output.",
  },
];
