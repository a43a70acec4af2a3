import { AsyncLocalStorage } from "node:async_hooks";
import type { ExtensionToolContext } from "@earendil-works/pi-coding-agent";
import { fail } from "../../contract/envelope.ts";
import { FlowError } from "../../contract/errors.ts";
import { firstNames, listedNames } from "../../contract/listed-names.ts";
import { contentText } from "../../parent-context/content-text.ts";
import type { ParentSnapshot } from "../../parent-context/snapshot.ts";
import type { HostCallContext, HostError, JsonValue, RunTree, WorkflowHost } from "../../../runtime/index.ts";
import { toolSchemaOf } from "./authoring-types.ts";
import type { SharedResources } from "../../harnesses/index.ts";

/** Root = 1; a workflow started by a workflow is 2; one more is refused. A fixed host ceiling. */
export const MAX_WORKFLOW_DEPTH = 2;

/**
 * Flow's own tools every workflow may call, whatever meta.tools says: external_help, and
 * external_runs for its reading actions. Its actions on runs (cancel, steer, apply, discard) need
 * meta.tools to name external_runs, as any tool that acts does.
 */
export const FLOW_ALWAYS_TOOLS = ["external_runs", "external_help"] as const;

/** The external_runs actions a workflow may take without naming the tool in meta.tools. */
export const RUNS_READING_ACTIONS: ReadonlySet<string> = new Set(["list", "inspect", "wait"]);

/**
 * The receipt of an external_runs action on runs from a workflow whose meta.tools does not name the
 * tool: a failed envelope like any other external_runs refusal, so a script that checks `ok` reads
 * it as it reads the rest.
 */
function undeclaredRunsAction(args: JsonValue): JsonValue | undefined {
  const action = args !== null && typeof args === "object" && !Array.isArray(args) ? args.action : undefined;
  if (typeof action !== "string" || RUNS_READING_ACTIONS.has(action)) return undefined;
  const message = `tools.external_runs ${action} acts on runs: name external_runs in meta.tools to let this workflow do that (without it, a workflow may list, inspect and wait).`;
  return fail("external_runs", action, "request_invalid", message, null) as unknown as JsonValue;
}

/** The workflow whose tools.* call is running: its depth, its run and its frozen parent snapshot. */
interface CallingWorkflow {
  depth: number;
  runId: string;
  snapshot: ParentSnapshot;
  /** The parent session's active tools when the outermost workflow call was made: every child's bound. */
  parentTools: readonly string[];
  /**
   * The tools the outermost workflow call could call (its session's, then): a nested workflow's
   * meta.tools must stay within them, even if the session gains tools while the tree runs.
   */
  callableTools: readonly string[];
  /** Told the run ID of a workflow this one starts through tools.* call `index` (its journal keeps it for a resume). */
  onNestedRun?(index: number, runId: string): void;
  /** The loads of the project's resources its agent() children share: a delegation through tools.* shares them too. */
  sharedResources?: SharedResources;
  /** The bounds the workflow shares with every workflow of its tree (runtime/run-tree.ts). */
  tree: RunTree;
}

/** A workflow's place inside the one calling it, set per tools.* call. */
interface CallingPlace extends CallingWorkflow {
  toolIndex: number;
  /**
   * False once the tools.* call has returned. The async context outlives the call in what it left
   * behind (a background run's settle, the parent turn that settle triggers), and those are no
   * longer inside the workflow.
   */
  open: boolean;
  /** The nested run this call resumes: set only by the resume of this call's own workflow. */
  resumesNested?: string;
}

/** A tools.* call's context as the orchestrator hands it over: a resumed parent names the nested run its call resumes. */
export interface ToolCallContext extends HostCallContext {
  resumesNested?: string;
}

// Carried by the async context of the tools.* call, so concurrent sessions and sibling calls never
// see each other's workflow.
const callingWorkflow = new AsyncLocalStorage<CallingPlace>();

/** The workflow whose tools.* call is running now, if any. */
function callingPlace(): CallingPlace | undefined {
  const place = callingWorkflow.getStore();
  return place?.open ? place : undefined;
}

/**
 * The snapshot a Flow tool called from a workflow's tools.* must use: the workflow's own, frozen
 * when the workflow call started, so a child started that way sees exactly what agent() children
 * see. Undefined outside a workflow.
 */
export function inheritedSnapshot(): ParentSnapshot | undefined {
  return callingPlace()?.snapshot;
}

/**
 * The tools bound of a Flow tool called from a workflow's tools.*: the workflow's own, taken when
 * its call started, so its tools.* children and nested workflows never exceed its agent() children.
 * Undefined outside a workflow.
 */
export function inheritedParentTools(): readonly string[] | undefined {
  return callingPlace()?.parentTools;
}

/**
 * The loads of the project's resources a Flow tool called from a workflow's tools.* shares: the
 * workflow's own (those of the parent turn that started it), so a child started that way sees the
 * project as agent() children do. Undefined outside a workflow.
 */
export function inheritedSharedResources(): SharedResources | undefined {
  return callingPlace()?.sharedResources;
}

/**
 * The workflow run whose tools.* call is running, if any: a delegation started there is that
 * run's child, as an agent() call's is (its span under the workflow's, its row in the report).
 */
export function callingWorkflowRun(): string | undefined {
  return callingPlace()?.runId;
}

export interface WorkflowPlace {
  depth: number;
  parentRunId?: string;
  /** The tree of the workflow starting this one, whose root's bounds it shares; none for a root. */
  tree?: RunTree;
  /** Tell the calling workflow which run its tools.* call started. */
  started?(runId: string): void;
  /**
   * The nested run this call may resume: only the resume of its own parent, at the call that
   * started it, resumes a nested run. Any other workflow asking is refused like a person would be.
   */
  resumesNested?: string;
}

/** Where a workflow started now sits: one deeper than the workflow calling it, if any. */
export function nextWorkflowPlace(): WorkflowPlace {
  const caller = callingPlace();
  const depth = (caller?.depth ?? 0) + 1;
  if (depth > MAX_WORKFLOW_DEPTH) {
    throw new FlowError("request_invalid", `Workflows may start workflows only to depth ${MAX_WORKFLOW_DEPTH}; this call would be depth ${depth}.`);
  }
  if (!caller) return { depth };
  const place: WorkflowPlace = { depth, parentRunId: caller.runId, tree: caller.tree, started: (runId) => caller.onNestedRun?.(caller.toolIndex, runId) };
  if (caller.resumesNested !== undefined) place.resumesNested = caller.resumesNested;
  return place;
}

type ToolContext = Pick<ExtensionToolContext, "executeTool" | "tools">;

/**
 * The tools a workflow started now may name in meta.tools: its session's callable tools, and for
 * a workflow started by a workflow only those the outermost call could call when it was made.
 */
export function callableWorkflowTools(ctx: Pick<ToolContext, "tools">): string[] {
  const inherited = callingPlace()?.callableTools;
  const names = ctx.tools.map((tool) => tool.name);
  if (inherited === undefined) return names;
  const bound = new Set(inherited);
  return names.filter((name) => bound.has(name));
}

/**
 * The names a workflow may call: those meta.tools asks for, which the session must be able to
 * call (checked before launch, script_invalid otherwise), plus Flow's read-only tools. A nested
 * workflow is held to the tools of the outermost call (callableWorkflowTools).
 */
export function workflowToolNames(requested: readonly string[] | undefined, ctx: ToolContext, where = ""): string[] {
  const callable = new Set(callableWorkflowTools(ctx));
  const missing = (requested ?? []).filter((name) => !callable.has(name));
  if (missing.length > 0) {
    const who = callingPlace() ? "the outermost workflow call of this tree could not call when it was made" : "this session cannot call";
    throw new FlowError("script_invalid", `meta.tools names ${firstNames(missing)}, which ${who} (callable: ${listedNames([...callable])})${where}.`);
  }
  const names = new Set(requested ?? []);
  for (const name of FLOW_ALWAYS_TOOLS) if (callable.has(name)) names.add(name);
  return [...names].sort();
}

/** The schemas of the tools a workflow may call, as the session registers them: what describeTool() renders. */
export function workflowToolSchemas(names: readonly string[], ctx: ToolContext): NonNullable<WorkflowHost["toolSchemas"]> {
  const wanted = new Set(names);
  return Object.fromEntries(ctx.tools.filter((tool) => wanted.has(tool.name)).map((tool) => [tool.name, toolSchemaOf(tool)]));
}

/**
 * tools.<name>(args) → the parent session's executeTool, so Pi's validation, hooks and permissions
 * apply exactly as for a model's call. A tool with structured content resolves to it (a failed
 * Flow receipt too: the script checks `ok`); a failure with only text rejects with that text.
 */
export function bindWorkflowTools(names: readonly string[], ctx: ToolContext, caller: CallingWorkflow, declared: readonly string[]): NonNullable<WorkflowHost["tools"]> {
  const tools: NonNullable<WorkflowHost["tools"]> = {};
  const readingOnly = !declared.includes("external_runs");
  for (const name of names) {
    tools[name] = async (args: JsonValue, { signal, index, resumesNested }: ToolCallContext) => {
      const refused = name === "external_runs" && readingOnly ? undeclaredRunsAction(args) : undefined;
      if (refused) return refused;
      const place: CallingPlace = { ...caller, toolIndex: index, open: true, ...(resumesNested !== undefined ? { resumesNested } : {}) };
      let outcome: Awaited<ReturnType<ToolContext["executeTool"]>>;
      try {
        outcome = await callingWorkflow.run(place, () => ctx.executeTool(name, args, { signal }));
      } finally {
        place.open = false;
      }
      const result = outcome.result as { content?: { type: string; text?: string }[]; structuredContent?: unknown };
      if (result.structuredContent !== undefined) return result.structuredContent;
      const text = contentText(result.content);
      if (!outcome.isError) return text;
      const error: HostError = Object.assign(new Error(text || `tools.${name} failed`), { code: "tool_failed" });
      throw error;
    };
  }
  return tools;
}
