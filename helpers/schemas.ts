// JSON Schemas of what scripts pass to and get from the runtime. The declarations (flow.d.ts) are
// generated from these, and external_help shows AGENT_OPTIONS_SCHEMA as `agentOptions`.

/** A JSON Schema object; `tsType` is json-schema-to-typescript's escape hatch for function types. */
export type SchemaObject = { [key: string]: unknown };

export const AGENT_OPTIONS_SCHEMA: SchemaObject = {
  type: "object",
  description:
    "Options of agent(): exactly one of role or subagent_type, and a prompt. The host validates them; unknown fields pass through to it.",
  properties: {
    role: { type: "string", description: "A configured role (exclusive with subagent_type). Unknown roles fail the run." },
    subagent_type: { type: "string", description: "A subagent type, instead of role." },
    harness: { type: "string", description: "How the child runs: pi, claude, codex or replay." },
    description: { type: "string", description: "A short label for the child, shown in supervision. Default: derived from the prompt." },
    cwd: { type: "string", description: "Working directory of the child; default: the parent's." },
    prompt: { type: "string", description: "The task. Evidence moves only here (see handoff())." },
    context: {
      type: "object",
      description: "Parent history the child sees, from the frozen snapshot taken when the workflow started.",
      properties: {
        mode: { enum: ["none", "recent", "full"] },
        turns: { type: "integer", minimum: 1, description: "With mode recent: how many turns." },
      },
      required: ["mode"],
      additionalProperties: false,
    },
    model: { type: "string", description: "Model for the child; default: the parent's." },
    outputSchema: { type: "object", description: "JSON Schema of a structured answer; `value` is then the parsed object." },
    timeoutMs: { type: "integer", minimum: 1, description: "Time limit for this child." },
    maxTurns: { type: "integer", minimum: 1, description: "Most model turns the child may take; the next one stops it and agent() fails, naming the quota." },
    maxToolCalls: { type: "integer", minimum: 1, description: "Most tool calls the child may start; the next one is refused and agent() fails, naming the quota." },
    resume: { type: "string", description: "A settled agent run (its runId) whose conversation this child continues, on that run's harness." },
  },
  required: ["prompt"],
  // Exactly one of role or subagent_type: each branch requires one and forbids the other (`false`),
  // which json-schema-to-typescript renders as a union with `?: never`.
  oneOf: [
    { properties: { role: { type: "string" }, subagent_type: false }, required: ["role"] },
    { properties: { subagent_type: { type: "string" }, role: false }, required: ["subagent_type"] },
  ],
};

export const AGENT_RESULT_SCHEMA: SchemaObject = {
  type: "object",
  description: "What agent() resolves to.",
  properties: {
    runId: { type: "string", description: "The child's run ID." },
    output: { tsType: "unknown", description: "The child's canonical output." },
    value: { tsType: "unknown", description: "The parsed structured output when outputSchema was given, else the text." },
    usage: { type: "object", description: "Token and cost usage, when the harness reports it." },
    observedAt: { type: "string", description: "ISO time the child settled; handoff({ source: result }) stamps it as capturedAt." },
  },
  required: ["runId", "output", "value"],
};

export const RUN_VIEW_SCHEMA: SchemaObject = {
  type: "object",
  description: "A run as external_delegate/external_workflow return it (receipt.data.run).",
  properties: {
    runId: { type: "string" },
    output: {
      type: "object",
      properties: {
        delivery: { enum: ["inline", "reference"] },
        value: { tsType: "unknown", description: "The final value, with inline delivery." },
        finalAvailable: { type: "boolean" },
      },
    },
    refs: {
      type: "object",
      properties: {
        final: {
          type: "object",
          description: "Ready-to-call external_runs arguments for the final view.",
          properties: { action: { const: "inspect" }, runIds: { type: "array", items: { type: "string" } }, view: { const: "final" } },
        },
      },
    },
  },
  required: ["runId", "output"],
};

export const PARALLEL_OPTIONS_SCHEMA: SchemaObject = {
  type: "object",
  properties: { concurrency: { type: "integer", minimum: 1, description: "Thunks in flight at once; default all." } },
  additionalProperties: false,
};

export const RETRY_OPTIONS_SCHEMA: SchemaObject = {
  type: "object",
  properties: {
    attempts: { type: "integer", minimum: 1, maximum: 100, description: "Total tries, default 3." },
    retryIf: {
      tsType: "(error: FlowError, attempt: number) => boolean | Promise<boolean>",
      description: "Return false to stop retrying and rethrow.",
    },
  },
  additionalProperties: false,
};

export const READ_FINAL_OPTIONS_SCHEMA: SchemaObject = {
  type: "object",
  properties: {
    limitBytes: { type: "integer", minimum: 1, description: "Page size for external_runs, default 65536." },
    maxPages: { type: "integer", minimum: 1, description: "Give up after this many pages, default 1000." },
  },
  additionalProperties: false,
};

export const HANDOFF_OPTIONS_SCHEMA: SchemaObject = {
  type: "object",
  properties: {
    maxChars: { type: "integer", minimum: 1, maximum: 1000000, description: "Evidence characters kept, default 12000." },
    source: {
      type: "object",
      // Open (no additionalProperties: false): an agent() result may be passed as is.
      description: "Provenance stamped on the packet; an agent() result works as is.",
      properties: {
        runId: { type: "string", description: "The run the evidence came from." },
        observedAt: { type: "string", description: "When the source settled (an agent() result's observedAt); the packet's capturedAt." },
        capturedAt: { type: "string", description: "Overrides observedAt as the capture time. Default: observedAt, else the run's start time." },
        revision: { type: "string", description: "The repository revision the evidence describes." },
        omittedPages: { type: "boolean", description: "True when you stopped paging before the end." },
      },
    },
  },
  additionalProperties: false,
};

/** Interface name -> schema, in the order the declarations list them. */
export const SCRIPT_SCHEMAS: ReadonlyArray<[string, SchemaObject]> = [
  ["AgentOptions", AGENT_OPTIONS_SCHEMA],
  ["AgentResult", AGENT_RESULT_SCHEMA],
  ["RunView", RUN_VIEW_SCHEMA],
  ["ParallelOptions", PARALLEL_OPTIONS_SCHEMA],
  ["RetryOptions", RETRY_OPTIONS_SCHEMA],
  ["ReadFinalOptions", READ_FINAL_OPTIONS_SCHEMA],
  ["HandoffOptions", HANDOFF_OPTIONS_SCHEMA],
];
