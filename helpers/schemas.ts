// JSON Schemas of what scripts pass to and get from the runtime. The declarations (flow.d.ts) are
// generated from these, and external_help shows AGENT_OPTIONS_SCHEMA as `agentOptions`. agent()'s
// options and the run view come from the contract (contract-schemas.ts, generated); the rest are
// the helpers' own.
import { AGENT_OPTIONS_SCHEMA, RUN_VIEW_SCHEMA } from "./contract-schemas.ts";

import type { SchemaObject } from "./types.ts";

export { AGENT_OPTIONS_SCHEMA, RUN_VIEW_SCHEMA, type SchemaObject };

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
