// What a run needs before its sandbox starts, checked on the host: its limits (the workflow's,
// overridden by the caller's) and its config (args, store, tools, clock, seed) as JSON text the VM
// reads. A problem here ends the run before any worker is taken.
import { seedState } from "./determinism.ts";
import { jsonDepth, toJsonText } from "./json.ts";
import { LimitsError, resolveLimits } from "./limits.ts";
import type { RunConfig } from "./protocol.ts";
import type { ParsedWorkflow, RunWorkflowOptions, WorkflowError, WorkflowLimits, WorkflowResult } from "./types.ts";

export type PreparedRun = { limits: WorkflowLimits; config: RunConfig } | { error: WorkflowError };

export function prepareRun(workflow: ParsedWorkflow, options: RunWorkflowOptions, replay: WorkflowResult["replay"]): PreparedRun {
  let limits: WorkflowLimits;
  try {
    limits = resolveLimits({ ...workflow.meta.limits, ...options.limits });
  } catch (error) {
    if (error instanceof LimitsError) return { error: { kind: "limit", code: error.limit, message: error.message } };
    throw error;
  }
  // The root's limits bound its tree from here on; a nested run is bounded by them as well.
  if (options.tree && !options.tree.nested) options.tree.budget.setRoot(limits);
  if (options.signal?.aborted) return { error: { kind: "aborted", code: "aborted", message: "the workflow run was aborted" } };

  try {
    const argsText = toJsonText(options.args ?? {}, "args");
    const store = Object.entries(options.store ?? {}).map(([key, value]): [string, string] => [key, toJsonText(value, `store value "${key}"`)]);
    // Read inside the VM by a parse that recurses: past valueDepth they are refused as the caller's mistake, not the script's limit.
    const inputs: Array<[what: string, text: string]> = [["args", argsText], ...store.map(([key, text]): [string, string] => [`store value "${key}"`, text])];
    for (const [what, text] of inputs) {
      if (jsonDepth(text, limits.valueDepth) > limits.valueDepth) throw new TypeError(`${what} nests deeper than ${limits.valueDepth} levels (valueDepth)`);
    }
    const config: RunConfig = { argsText, toolNames: Object.keys(options.host.tools ?? {}), startedAt: replay.startedAt, seedState: seedState(replay.seed), store };
    return { limits, config };
  } catch (error) {
    return { error: { kind: "script", code: "args_invalid", message: (error as Error).message } };
  }
}
