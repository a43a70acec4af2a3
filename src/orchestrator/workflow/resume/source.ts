import type { ExtensionToolContext, ToolInfo } from "@earendil-works/pi-coding-agent";
import { FlowError } from "../../../contract/errors.ts";
import type { RunView } from "../../../contract/run-schema.ts";
import { assertRunId, formatBytes, openRunStore, projectSessionKeys, SCRIPT_MAX_BYTES, type RunStore } from "../../../runs/index.ts";
import { hashArgs } from "../call-identity.ts";
import { locateIn, planResume, safeToReplay, unansweredTools, type LocatedRun, type ResumePlan } from "./plan.ts";
import { checkArgs, parseSelected, selectWorkflow, workflowDirs, type ChosenSource, type SelectedWorkflow } from "../sources.ts";
import { FLOW_ALWAYS_TOOLS, workflowToolNames } from "../tools.ts";

type ToolContext = Pick<ExtensionToolContext, "executeTool" | "tools" | "cwd">;

export interface ResumeInputs {
  runId: string;
  /** The session's own store, looked in first. */
  runs: RunStore;
  flowHome: string;
  /** Whether the project's saved workflows count (project-trust.ts). */
  projectTrusted: boolean;
  ctx: ToolContext;
  /** Pi's registered tools with their annotations (pi.getAllTools()). */
  toolInfos: readonly Pick<ToolInfo, "name" | "annotations">[];
  /** The resume comes from a workflow (its parent's resume): a nested run may be resumed. */
  nested?: boolean;
  /** The call's signal: a cancel stops a check of args running in the checking worker. */
  signal?: AbortSignal;
}

/** The source of a resume: the run's own script and args, with what it replays from. */
export type ResumedSource = ChosenSource & Required<Pick<ChosenSource, "resume">>;

/**
 * Finds runs among this project's sessions (the user's Flow home), the caller's own first: a run of
 * another project or user is never found, which is run_unavailable like an unknown one. The other
 * sessions' stores are opened once, on the first run not found in the caller's own, and kept for
 * the resume: a chain of resumes looks up every replayed child this way.
 */
function projectRuns(own: RunStore, flowHome: string, cwd: string): (runId: string) => LocatedRun | undefined {
  let others: RunStore[] | undefined;
  return (runId) => {
    const here = locateIn(own, runId);
    if (here) return here;
    others ??= projectSessionKeys(flowHome, cwd)
      .filter((key) => key !== own.scope.sessionKey)
      .map((key) => openRunStore({ home: flowHome, cwd, sessionId: key, registry: own.registry }));
    for (const store of others) {
      const found = locateIn(store, runId);
      if (found) return found;
    }
    return undefined;
  };
}

/**
 * The unanswered calls of tools not safe to replay, in this run and in the nested runs it would
 * resume (their pending calls would run again too), each named with the run that made it.
 */
function unsafePending(plan: ResumePlan, replaySafe: ReadonlySet<string>): string[] {
  const named = unansweredTools(plan)
    .filter((call) => !safeToReplay(call, replaySafe))
    .map((call) => `tools.${call.tool}${call.action ? ` ${call.action}` : ""} call ${call.index} of run ${plan.from.runId}`);
  for (const [index, nestedRunId] of plan.nested) {
    if (plan.tools.get(index)?.answer !== undefined) continue; // it settled: replayed, not resumed
    const found = plan.locate(nestedRunId);
    if (!found) continue;
    const nested = planResume(found.store, nestedRunId, true);
    if ("plan" in nested) named.push(...unsafePending({ ...nested.plan, locate: plan.locate }, replaySafe));
  }
  return named;
}

/**
 * Tools whose unanswered call a resume may run again: Pi's `replay: "safe"` on the tool, tools Pi
 * annotates read-only or idempotent, and pi-flow's own read-only tools. Any other tool's call that
 * started and never answered may have acted already, so the resume refuses it.
 */
export function replaySafeTools(ctx: Pick<ExtensionToolContext, "tools">, toolInfos: ResumeInputs["toolInfos"]): Set<string> {
  const safe = new Set<string>(FLOW_ALWAYS_TOOLS);
  for (const tool of ctx.tools) if ((tool as { replay?: string }).replay === "safe") safe.add(tool.name);
  for (const info of toolInfos) if (info.annotations?.readOnlyHint || info.annotations?.idempotentHint) safe.add(info.name);
  return safe;
}

/**
 * Everything a resume checks before anything runs: the run (resumable, this project's), the code it
 * ran (a saved workflow must still hold the same source), and its calls that may have acted.
 */
export async function prepareResume(inputs: ResumeInputs): Promise<{ succeeded: RunView } | ResumedSource> {
  const runId = assertRunId(inputs.runId);
  const locate = projectRuns(inputs.runs, inputs.flowHome, inputs.ctx.cwd);
  const found = locate(runId);
  if (!found) throw new FlowError("run_unavailable", `Run ${runId} is not a run of this project: unknown, another project's or user's, or pruned.`);
  const planned = planResume(found.store, runId, inputs.nested ?? false);
  if ("succeeded" in planned) return planned;
  const plan: ResumePlan = { ...planned.plan, locate };
  let selected: SelectedWorkflow;
  if (plan.workflow === "inline") selected = { name: "inline", source: "inline", text: plan.script, label: "inline.js" };
  else {
    selected = selectWorkflow({ workflow: plan.workflow }, workflowDirs(inputs.ctx.cwd, inputs.flowHome, inputs.projectTrusted));
    if (hashArgs(selected.text) !== plan.scriptHash) {
      throw new FlowError(
        "script_invalid",
        `The saved workflow ${plan.workflow} (${selected.source}) is not the source run ${runId} ran: it changed since. A resumed run always runs the code it started with; run the workflow again instead.`,
      );
    }
  }
  // The journal is a file: what it hands back meets the bounds a fresh call's script and args meet.
  if (Buffer.byteLength(selected.text, "utf8") > SCRIPT_MAX_BYTES) {
    throw new FlowError("request_invalid", `Run ${runId}'s recorded script is over ${formatBytes(SCRIPT_MAX_BYTES)}, the most a workflow script may hold: its journal is not one pi-flow wrote.`);
  }
  const workflow = parseSelected(selected);
  const args = await checkArgs(workflow, plan.args, selected.label, inputs.signal);
  const toolNames = workflowToolNames(workflow.meta.tools, inputs.ctx);
  const replaySafe = replaySafeTools(inputs.ctx, inputs.toolInfos);
  const unsafe = unsafePending(plan, replaySafe);
  if (unsafe.length > 0) {
    const named = unsafe.join(", ");
    throw new FlowError(
      "request_invalid",
      `Run ${runId} cannot be resumed: ${named} started and never answered, and the tool is not safe to replay (it may already have acted). Check what it did, then run the workflow again.`,
    );
  }
  return { selected, workflow, args, toolNames, resume: { plan, replaySafe } };
}
