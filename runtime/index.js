// `import … from "pi-flow/runtime"`: the runtime's public surface (runtime/index.ts) for plain Node.
// Under node_modules Node refuses to strip types from .ts files, so this entry, plain JavaScript,
// first teaches Node's loader to strip pi-flow's own (runtime/strip-own-types.js), then loads the
// TypeScript. In a checkout Node strips them itself. A test keeps these names equal to index.ts's.
import { stripOwnTypes } from "./strip-own-types.js";

stripOwnTypes(new URL("../", import.meta.url).href);
const runtime = await import("./index.ts");

export const {
  parseWorkflow,
  SUPPORTED_API_VERSIONS,
  runWorkflow,
  JsonAnswer,
  NESTED_MEMORY_BYTES,
  RunTree,
  DEFAULT_LIMITS,
  LIMIT_CEILINGS,
  LIMIT_LABELS,
  LIMIT_NAMES,
  LimitsError,
  resolveLimits,
  WorkflowScriptError,
  isWorkflowScriptError,
  capText,
  MAX_ERROR_MESSAGE_CHARS,
  MAX_NAME_CHARS,
  generateDeclarations,
  configureWorkflowWorkers,
  prewarmWorkflowWorkers,
  shutdownWorkflowWorkers,
} = runtime;
