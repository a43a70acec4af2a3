// Public types of the workflow runtime. Everything that crosses the host boundary is plain JSON.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type WorkflowOrigin = "saved" | "inline";

/** Limits a run enforces. See DEFAULT_LIMITS and LIMIT_CEILINGS in limits.ts. */
export interface WorkflowLimits {
  /** Wall time of the whole run, from runWorkflow() to the result. */
  timeoutMs: number;
  /** QuickJS heap of the run's VM. */
  memoryBytes: number;
  /** QuickJS stack of the run's VM (bounds recursion depth). */
  stackBytes: number;
  /** agent() calls per run; the (N+1)th call fails the run. */
  agentCalls: number;
  /** agent() calls running at once, and separately tools.*() calls running at once; extra calls queue. */
  concurrency: number;
  /** tools.*() calls per run; the (N+1)th call fails the run. */
  toolCalls: number;
  /** Characters of console/text output per run. */
  outputChars: number;
  /** Characters of JSON in one agent() options object or tools.*() argument (what crosses to the host). */
  callArgsChars: number;
  /** Characters of JSON in one agent()/tools.*() answer handed back to the script. */
  replyChars: number;
  /** Characters of JSON per store() value. */
  storeValueChars: number;
  /** Characters of JSON (keys plus values) in the whole store. */
  storeTotalChars: number;
  /** store() calls per run, deletes included: each one is journaled. */
  storeWrites: number;
  /** Characters (keys plus JSON values) written by store() over the whole run. */
  storeWriteChars: number;
  /** Characters of JSON in the script's return value. */
  resultChars: number;
  /** Nesting of arrays and objects in any value that crosses to the host (return value, store, call arguments). */
  valueDepth: number;
  /**
   * Bytes of script data the host holds for the run at once: arguments of agent() and tools.*()
   * calls queued or running, and the store. Counted as two bytes per character of JSON.
   */
  hostBytes: number;
  /** Time the VM spends running the script's own code; awaiting children and tools does not count. */
  cpuMs: number;
}

export type LimitName = keyof WorkflowLimits;

export interface WorkflowMeta {
  name?: string;
  description?: string;
  /** JSON Schema of `args`; the host validates arguments before the run. */
  args?: JsonValue;
  limits?: Partial<WorkflowLimits>;
  /** Tools the workflow asks the host for. */
  tools?: string[];
  [key: string]: JsonValue | Partial<WorkflowLimits> | string[] | undefined;
}

export interface ParsedWorkflow {
  apiVersion: 1;
  meta: WorkflowMeta;
  origin: WorkflowOrigin;
  path?: string;
  /** The original source text. */
  source: string;
  /** The source with `export` keywords blanked: same lines and columns, runnable as a function body. */
  body: string;
}

/**
 * What a script passes to agent(), as JSON. The runtime passes it on unchecked; pi-flow's host checks
 * it against AGENT_OPTIONS_SCHEMA (external_delegate's input: exactly one of `role` or
 * `subagent_type`, the same minimums, and any other field refused).
 */
export interface AgentOptions {
  role?: string;
  subagent_type?: string;
  harness?: string;
  /** Default: derived from the prompt by the host. */
  description?: string;
  cwd?: string;
  /** true: the child loads no ambient extension or MCP server, only what pi-flow gives it. */
  isolated?: boolean;
  prompt: string;
  context?: { mode: "none" | "recent" | "full"; turns?: number };
  model?: string;
  outputSchema?: JsonValue;
  timeoutMs?: number;
  maxTurns?: number;
  maxToolCalls?: number;
  resume?: string;
  [key: string]: JsonValue | undefined;
}

export interface AgentResult {
  runId: string;
  output: JsonValue;
  value: JsonValue;
  usage?: JsonValue;
  /** ISO time the child settled; handoff() stamps it as the evidence's capture time. */
  observedAt?: string;
}

/**
 * What a host function may reject with. `fatal: true` ends the run even if the script catches the
 * error (unknown role, a stopped root).
 */
export interface HostError extends Error {
  code?: string;
  runId?: string;
  fatal?: boolean;
}

export interface ToolSchema {
  description?: string;
  input: JsonValue;
  output?: JsonValue;
}

/** Passed to each host call. `signal` aborts when the run ends, so calls the script left running can be cancelled. */
export interface HostCallContext {
  signal: AbortSignal;
  /** 0-based index of the agent() or tools.*() call within the run. */
  index: number;
}

export interface WorkflowHost {
  agent(options: AgentOptions, context: HostCallContext): Promise<AgentResult>;
  tools?: Record<string, (args: JsonValue, context: HostCallContext) => Promise<unknown>>;
  /** Input and output JSON Schemas per tool, for declarations; not used to validate at run time. */
  toolSchemas?: Record<string, ToolSchema>;
}

export type WorkflowEvent =
  | { type: "agent_start"; index: number; options: AgentOptions }
  /** Every agent_start gets one agent_end, fatal errors and calls still running at the end of the run included. */
  | { type: "agent_end"; index: number; ok: boolean; runId?: string; code?: string }
  | { type: "tool_start"; index: number; name: string }
  | { type: "tool_end"; index: number; name: string; ok: boolean; code?: string }
  | { type: "store"; key: string; value: JsonValue | undefined }
  | { type: "output"; text: string }
  /** A nested run waits for its share of its tree's memory before it starts (run-tree.ts): `bytes`, its worker's cap. */
  | { type: "heap_wait"; bytes: number };

export interface RunWorkflowOptions {
  args?: unknown;
  host: WorkflowHost;
  limits?: Partial<WorkflowLimits>;
  /** Seeds Math.random(); the same seed replays the same sequence. Default: a fresh random seed. */
  seed?: string | number;
  /** Epoch ms that Date.now() and new Date() return throughout the run. Default: Date.now(). */
  startedAt?: number;
  signal?: AbortSignal;
  onEvent?: (event: WorkflowEvent) => void;
  /** Values load() sees before the script writes any (for example "flow.runIds"). */
  store?: Record<string, unknown>;
  /**
   * The tree of runs this one belongs to: its root's call limits bound every run in it, and its
   * nested runs share one heap budget (run-tree.ts). A root passes a fresh tree, a run started by
   * a workflow its root's. Without one, the run's own limits are its only bounds.
   */
  tree?: { budget: TreeBudget; nested: boolean };
}

/** The limits a tree of runs counts across all its runs. */
export type SharedCount = "agentCalls" | "toolCalls";

/** What a run asks of its tree (run-tree.ts's RunTree is the one implementation). */
export interface TreeBudget {
  /** The root's run gives its limits once they are resolved; until then nothing is counted. */
  setRoot(limits: Record<SharedCount, number>): void;
  /** Counts one call of the tree; false, counting nothing, once the tree has made its root's limit of them. */
  take(name: SharedCount): boolean;
  /** The message of a call the tree refused. */
  refusal(name: SharedCount): string;
  /** Resolves with a release once `bytes` of the nested runs' heap are free; rejects if `signal` aborts first. */
  reserveHeap(bytes: number, signal: AbortSignal, onWait?: () => void): Promise<() => void>;
}

export type WorkflowErrorKind = "script" | "timeout" | "aborted" | "limit" | "sandbox";

export interface WorkflowError {
  kind: WorkflowErrorKind;
  /** Host error code, the limit's name for kind "limit", "timeoutMs" or "aborted". */
  code?: string;
  message: string;
  /** The error's name inside the script (TypeError, FlowError, ...). */
  name?: string;
  stack?: string;
  /** 1-based position in the workflow source. */
  line?: number;
  column?: number;
  runId?: string;
}

export interface StoreWrites {
  set: Record<string, JsonValue>;
  delete: string[];
}

export interface ReplayInputs {
  seed: string;
  startedAt: number;
}

export type WorkflowResult =
  | { ok: true; value: JsonValue | undefined; output: string; storeWrites: StoreWrites; replay: ReplayInputs }
  | { ok: false; error: WorkflowError; output: string; replay: ReplayInputs };
