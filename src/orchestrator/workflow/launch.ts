// The one entry that launches a workflow, beside launchChild: it chooses the source (a saved or
// inline script, or the run a resume continues), claims the resume, finds the run's place among
// nested workflows, names it, and starts it on the run lifecycle. The external_workflow tool is a
// thin adapter over it. The root runs in this process on every backend; its children reach a fleet
// through launchChild (docs/architecture.md, "Seams").
import type { ExtensionToolContext, ToolInfo } from "@earendil-works/pi-coding-agent";
import { FlowError } from "../../contract/errors.ts";
import { MAX_LISTED_NAMES } from "../../contract/listed-names.ts";
import type { RunView } from "../../contract/run-schema.ts";
import type { WorkflowInput } from "../../contract/workflow-schema.ts";
import { formatBytes, redactText, SCRIPT_MAX_BYTES } from "../../runs/index.ts";
import { foregroundQueueFull, foregroundWorkflowSlots, queueFull, type LaunchEnvironment, type Slots } from "../child/index.ts";
import { claimResume, type ResumeClaim } from "./resume/claims.ts";
import { prepareResume } from "./resume/source.ts";
import { checkArgs, metaPosition, parseSelected, selectWorkflow, TOOL_ARGS_PASSING, workflowDirs, type ChosenSource, type SelectedWorkflow } from "./sources.ts";
import { knownNames } from "./named-targets.ts";
import { formatProblem } from "./problem.ts";
import { literalProblems } from "./script-check.ts";
import { startWorkflow, type StartedWorkflow, type WorkflowProgress } from "./start.ts";
import { bindWorkflowTools, callableWorkflowTools, nextWorkflowPlace, workflowToolNames, workflowToolSchemas } from "./tools.ts";
import { RunTree, type ParsedWorkflow } from "../../../runtime/index.ts";


/** One external_workflow call, as the tool received it. */
export interface WorkflowRequest {
  input: Pick<WorkflowInput, "workflow" | "script" | "args" | "resume" | "description"> & { background?: boolean };
  toolCallId: string;
  /** Foreground only: aborting it stops the root and every child. */
  signal?: AbortSignal;
  /** A background root's slots (the session's background workflows); a foreground root takes the process's. */
  slots?: Slots;
  onProgress?(progress: WorkflowProgress): void;
  /**
   * Called once the source is chosen, just before the run starts: checking args may wait on the
   * checking worker, and the session may have closed or the call been aborted meanwhile.
   */
  beforeStart?(): void;
}

/** What the calling session lends the launch. */
export interface WorkflowEnvironment {
  launch: LaunchEnvironment;
  ctx: ExtensionToolContext;
  flowHome: string;
  /** Pi's registered tools with their annotations (pi.getAllTools()); asked only by a resume. */
  toolInfos(): readonly Pick<ToolInfo, "name" | "annotations">[];
}

/** A resume of a run that had already succeeded: its result, and nothing runs again. */
export interface AlreadySucceeded {
  succeeded: RunView;
}

/**
 * The script to run and its inputs, checked before launch: a saved or inline workflow, or the run
 * a resume continues (its own source and args). Every refusal is a typed FlowError.
 */
async function chooseSource(input: WorkflowRequest["input"], env: WorkflowEnvironment, nested: boolean, signal: AbortSignal | undefined): Promise<ChosenSource | AlreadySucceeded> {
  const { ctx, launch } = env;
  if (input.resume === undefined) {
    if (input.script !== undefined && Buffer.byteLength(input.script, "utf8") > SCRIPT_MAX_BYTES) {
      throw new FlowError("request_invalid", `script is over ${formatBytes(SCRIPT_MAX_BYTES)} (${SCRIPT_MAX_BYTES} bytes), the most a workflow script may hold.`);
    }
    const selected = selectWorkflow(input, workflowDirs(ctx.cwd, env.flowHome, launch.projectTrusted));
    const workflow = parseSelected(selected);
    await refuseLiteralProblems(selected, workflow, env);
    const args = await checkArgs(workflow, input.args, selected.label, signal, TOOL_ARGS_PASSING);
    return { selected, workflow, args, toolNames: workflowToolNames(workflow.meta.tools, ctx, metaPosition(workflow, selected.label)) };
  }
  if (input.workflow !== undefined || input.script !== undefined || input.args !== undefined) {
    throw new FlowError("request_invalid", "resume continues a run with its own source and args: give no workflow, script or args with it.");
  }
  // A nested run resumes only from a workflow: its parent's resume starts it again.
  return prepareResume({ runId: input.resume, runs: launch.runs, flowHome: env.flowHome, projectTrusted: launch.projectTrusted, ctx, toolInfos: env.toolInfos(), nested, ...(signal ? { signal } : {}) });
}

/**
 * A workflow, saved or inline, that writes a call which would fail mid-run (a role or workflow this project
 * does not know, an agent() option or literal outputSchema agent() refuses, a tools.* call it may
 * not make) is refused before its first child runs, as `flow run` and `flow check` refuse it.
 */
async function refuseLiteralProblems(selected: SelectedWorkflow, workflow: ParsedWorkflow, env: WorkflowEnvironment): Promise<void> {
  const problems = await literalProblems(selected.text, selected.label, workflow, knownNames(env.ctx.cwd, env.flowHome, env.launch.projectTrusted));
  if (problems.length === 0) return;
  // The message goes into the model's context: a script may write thousands of bad calls.
  const listed = problems.slice(0, MAX_LISTED_NAMES).map(formatProblem);
  if (problems.length > listed.length) listed.push(`… and ${problems.length - listed.length} more problems (flow check lists them all)`);
  throw new FlowError("script_invalid", listed.join("\n"));
}

/** Launches one workflow run, or answers a resume of a run that already succeeded. Refusals throw a FlowError. */
export async function launchWorkflow(request: WorkflowRequest, env: WorkflowEnvironment): Promise<StartedWorkflow | AlreadySucceeded> {
  const { input } = request;
  const { launch, ctx } = env;
  const background = input.background ?? false;
  const place = nextWorkflowPlace();
  const { depth, parentRunId } = place;
  const nested = input.resume !== undefined && place.resumesNested === input.resume;
  // A workflow's nested runs are bounded by its tree, not by slots. A root takes one: a background
  // root one of its session's, a foreground root one of the process's.
  const slots = depth > 1 ? undefined : background ? request.slots : foregroundWorkflowSlots();
  if (slots?.full) throw background ? queueFull(slots, launch.supervised !== false) : foregroundQueueFull(slots);
  const source = await chooseSource(input, env, nested, request.signal);
  if ("succeeded" in source) return source;
  // Other launches ran while the args were checked: the slot may be gone, the session closed.
  if (slots?.full) throw background ? queueFull(slots, launch.supervised !== false) : foregroundQueueFull(slots);
  request.beforeStart?.();
  const { selected, workflow, args, toolNames, resume } = source;
  // One resume per run: a second one, at once or later, is refused (resume/claims.ts).
  let claim: ResumeClaim | undefined = resume ? claimResume(resume.plan.store, resume.plan.from.runId) : undefined;
  try {
    // Frozen now, when the call starts: children started minutes later select from this.
    const snapshot = launch.snapshot();
    // An empty or blank description (models fill optional fields so) labels nothing: as if absent.
    const given = input.description?.trim() ? input.description : undefined;
    const described = given ?? resume?.plan.from.task.description ?? workflow.meta.description ?? workflow.meta.name;
    // Redacted before it is cut: a token cut in two leaves a piece no rule recognises.
    const description = redactText(described ?? `${selected.name} workflow`).text.slice(0, 200);
    // A root starts a tree; a workflow started by a workflow shares its root's bounds.
    const tree = { budget: place.tree ?? new RunTree(), nested: place.tree !== undefined };
    // Taken now, like the snapshot: the workflows this one starts may name no tool beyond these.
    const callableTools = callableWorkflowTools(ctx);
    const started = startWorkflow({
      workflow,
      selected,
      args,
      description,
      env: launch,
      tools: (runId, onNestedRun) => bindWorkflowTools(toolNames, ctx, { depth, runId, snapshot, parentTools: launch.parentTools, callableTools, onNestedRun, tree: tree.budget, ...(launch.sharedResources ? { sharedResources: launch.sharedResources } : {}) }, workflow.meta.tools ?? []),
      toolSchemas: workflowToolSchemas(toolNames, ctx),
      background,
      depth,
      tree,
      toolCallId: request.toolCallId,
      ...(resume ? { resume } : {}),
      ...(parentRunId ? { parentRunId } : {}),
      ...(request.signal && !background ? { signal: request.signal } : {}),
      ...(slots ? { slots } : {}),
      ...(request.onProgress ? { onProgress: request.onProgress } : {}),
    });
    claim?.started(started.runId);
    claim = undefined; // the run exists: whatever happens next, the claim names it
    place.started?.(started.runId);
    return started;
  } finally {
    claim?.release();
  }
}
