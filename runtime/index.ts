// The workflow runtime's public surface. It knows nothing of Pi: the host passes its functions in.
export { parseWorkflow, SUPPORTED_API_VERSIONS, type ParseWorkflowOptions } from "./parse.ts";
export { runWorkflow } from "./run-workflow.ts";
export { JsonAnswer } from "./json-answer.ts";
export { NESTED_MEMORY_BYTES, RunTree } from "./run-tree.ts";
export { DEFAULT_LIMITS, LIMIT_CEILINGS, LIMIT_LABELS, LIMIT_NAMES, LimitsError, resolveLimits } from "./limits.ts";
export { WorkflowScriptError, isWorkflowScriptError } from "./errors.ts";
export { capText, MAX_ERROR_MESSAGE_CHARS, MAX_NAME_CHARS } from "./text.ts";
export { generateDeclarations, type DeclarationOptions } from "./declarations.ts";
export { configureWorkflowWorkers, prewarmWorkflowWorkers, shutdownWorkflowWorkers, type PoolOptions } from "./pool.ts";
export type {
  AgentOptions,
  AgentResult,
  HostCallContext,
  HostError,
  JsonValue,
  LimitName,
  ParsedWorkflow,
  ReplayInputs,
  RunWorkflowOptions,
  SharedCount,
  StoreWrites,
  ToolSchema,
  TreeBudget,
  WorkflowError,
  WorkflowErrorKind,
  WorkflowEvent,
  WorkflowHost,
  WorkflowLimits,
  WorkflowMeta,
  WorkflowOrigin,
  WorkflowResult,
} from "./types.ts";
