import { randomUUID } from "node:crypto";
import type { RunOutcome, RunView } from "../../contract/run-schema.ts";
import { redactValueUnder, runFiles, type RunWriter, type SettleResult } from "../../runs/index.ts";
import {
  runWorkflow,
  type ParsedWorkflow,
  type WorkflowError,
  type WorkflowEvent,
  type WorkflowHost,
  type WorkflowResult,
  type RunWorkflowOptions,
} from "../../../runtime/index.ts";
import { hashArgs } from "./call-identity.ts";
import { TOOLS_WITHHELD, type LaunchEnvironment } from "../child/index.ts";
import { startRun, type SlotQueue } from "../lifecycle/index.ts";
import { STUBBED } from "../../harnesses/index.ts";
import { journaledTools, replayingHost } from "./journal-replay.ts";
import type { ResumeReplay } from "./resume/plan.ts";
import type { ChildEntry } from "../../contract/child-entry.ts";
import { WorkflowChildren, type ChildCounts } from "./children.ts";
import type { SelectedWorkflow } from "./sources.ts";
import { traceRun, traced, type RunTraceHooks } from "../../telemetry/index.ts";

/** Up to this many children, every progress change is sent; beyond, one update per event-loop turn. */
const PROGRESS_EVERY_CHANGE_UP_TO = 16;

/** The warning of a root that succeeded although the script caught failed agent() calls. */
export const HANDLED_CHILD_FAILURES = "handled_child_failures";

export interface WorkflowProgress {
  runId: string;
  children: readonly ChildEntry[];
  counts: ChildCounts;
}

export interface WorkflowLaunch {
  workflow: ParsedWorkflow;
  selected: SelectedWorkflow;
  args: Record<string, unknown>;
  description: string;
  env: LaunchEnvironment;
  /**
   * The tools.* bindings, made once the run has its ID (nested calls name it as their parent);
   * `onNestedRun` hears which workflow run a tools.* call started.
   */
  tools(runId: string, onNestedRun: (index: number, runId: string) => void): WorkflowHost["tools"];
  /** The same tools' schemas, for describeTool()/searchTools() in the script. */
  toolSchemas?: WorkflowHost["toolSchemas"];
  background: boolean;
  /** A root waits here for a slot before its sandbox starts (queued until then). */
  slots?: SlotQueue;
  /** Foreground only: the parent tool's signal; aborting it stops the root and every child. */
  signal?: AbortSignal;
  depth: number;
  /** The tree of runs this one belongs to: its root's bounds are shared by all (runtime/run-tree.ts). */
  tree: NonNullable<RunWorkflowOptions["tree"]>;
  /** The Pi tool call that started this run, kept in its launch evidence for correlation. */
  toolCallId?: string;
  /** The workflow that started this one through tools.external_workflow. */
  parentRunId?: string;
  /** Continue this interrupted run: same seed and clock, settled calls answered from its journal. */
  resume?: ResumeReplay;
  onProgress?(progress: WorkflowProgress): void;
}

export interface StartedWorkflow {
  runId: string;
  accepted: RunView;
  /** Settles with the root once every child it started has settled; never rejects. */
  settled: Promise<SettleResult>;
}

const OUTCOME_OF: Partial<Record<WorkflowError["kind"], RunOutcome>> = { timeout: "timed_out", aborted: "cancelled" };

/** The cause of a root failure, as the receipt's error.message says it. */
export function describeFailure(error: WorkflowError): string {
  const where = error.line === undefined ? "" : ` at line ${error.line}, column ${error.column ?? 1}`;
  // A limit a call of the script hit (store(), an oversized agent() call) carries that call's line.
  if (error.kind === "limit") return `${error.message} (limit ${error.code ?? "unknown"})${where}`;
  if (error.kind !== "script") return error.message;
  const name = error.name && error.name !== "Error" ? `${error.name}: ` : "";
  // "failed" adds nothing to a failure's message (a resumed run's divergence carries it).
  const code = error.code && error.code !== "host_error" && error.code !== "failed" && !error.message.startsWith(error.code) ? ` [${error.code}]` : "";
  return `${name}${error.message}${code}${where}`;
}

/**
 * Registers the workflow run (its script and arguments persisted before registration), then runs
 * the script in the sandbox, on the one run lifecycle (startRun). The root ends cancelled when the
 * parent's signal (foreground) or an operator cancel aborts it, timed_out at its wall-time limit,
 * failed on any other error.
 */
export function startWorkflow(launch: WorkflowLaunch): StartedWorkflow {
  const { workflow, selected, env, background } = launch;
  const { resume } = launch;
  // A resumed run replays the script with the inputs of the run it continues.
  const seed = resume?.plan.seed ?? randomUUID();
  const startedAt = resume?.plan.startedAt ?? Date.now();
  const resumedFrom = resume ? { resumedFrom: resume.plan.from.runId } : {};
  let children!: WorkflowChildren;
  let host!: WorkflowHost;
  let trace!: RunTraceHooks;
  // Progress: every change is shown while a workflow has few children; a larger fan-out gets one
  // update per turn of the event loop (many children that start or settle together cost one, and
  // the host's timers are not starved by updates). The last update goes out before the root
  // settles, so the final counts are always shown. Updates may be coalesced; the result never is.
  let progressQueued = false;
  let sendProgress = () => {};
  const progress = () => {
    if (!launch.onProgress || progressQueued) return;
    if (children.entries.length <= PROGRESS_EVERY_CHANGE_UP_TO) return sendProgress();
    progressQueued = true;
    setImmediate(() => progressQueued && sendProgress());
  };
  return startRun<WorkflowResult>({
    runs: env.runs,
    create: {
      kind: "workflow",
      background,
      status: launch.slots && !launch.slots.available ? "queued" : "running",
      task: {
        description: launch.description,
        workflow: selected.name,
        source: selected.source,
        ...(launch.parentRunId ? { parentRunId: launch.parentRunId } : {}),
        ...resumedFrom,
        // A resume continues its run's line of work (a resume of a resume, the first run's).
        ...(resume ? { correlationId: resume.plan.from.correlationId ?? resume.plan.from.runId } : {}),
      },
      launch: {
        ...(launch.toolCallId ? { toolCallId: launch.toolCallId } : {}),
        workflow: selected.name,
        source: selected.source,
        script: selected.text,
        args: launch.args,
        meta: workflow.meta,
        depth: launch.depth,
        ...resumedFrom,
      },
    },
    // The parent's abort stops the root and its children; the call then returns a cancelled receipt
    // with the run rather than rejecting (a listed deviation: docs/contract.md, "Deviations and additions").
    ...(launch.signal ? { signal: launch.signal } : {}),
    ...(launch.slots ? { slots: launch.slots } : {}),
    prepare: (writer) => {
      // The replay inputs: with the journal's store and child answers they replay the run. The hashes
      // tell a resume whether the script and args it reads back (redacted when saved) are the ones that ran.
      writer.journal({ t: "event", name: "replay", data: { seed, startedAt, depth: launch.depth, scriptHash: hashArgs(selected.text), argsHash: hashArgs(launch.args) } });
      writer.setChildren({ count: 0, failed: 0 });
      trace = traceRun(() => ({ ...traced(writer.view()), kind: "workflow" }));
      sendProgress = () => {
        progressQueued = false;
        launch.onProgress?.({ runId: writer.runId, children: children.entries, counts: children.counts });
      };
      children = new WorkflowChildren({ env, writer, onChange: progress, resumed: resume !== undefined });
      const live: WorkflowHost = { agent: (options, context) => children.agent(options, context) };
      // A nested workflow's run ID, by the tools.* call that started it: the parent's resume resumes it.
      const nested = (index: number, runId: string) => {
        if (!writer.settled) writer.journal({ t: "event", name: "nested_run", data: { index, runId } });
      };
      const rawTools = launch.tools(writer.runId, nested);
      const runDir = runFiles(env.runs.scope, writer.runId).dir;
      const tools = journaledTools(rawTools, writer, runDir);
      if (tools) live.tools = tools;
      if (launch.toolSchemas) live.toolSchemas = launch.toolSchemas;
      host = resume ? replayingHost({ plan: resume.plan, live, rawTools, children, writer, replaySafe: resume.replaySafe, runDir }) : live;
      if (resume) writer.setChildren(children.counts);
    },
    work: (writer, signal) => runWorkflow(workflow, { args: launch.args, host, seed, startedAt, signal, tree: launch.tree, onEvent: (event) => record(writer, event, trace) }),
    recover: (error, signal): WorkflowResult => ({
      ok: false,
      // A background root cancelled while it waited for its slot never ran: cancelled, not failed.
      error: signal.aborted
        ? { kind: "aborted", code: "aborted", message: "the workflow run was aborted" }
        : { kind: "sandbox", message: `the workflow could not run: ${error instanceof Error ? error.message : String(error)}` },
      output: "",
      replay: { seed, startedAt },
    }),
    settle: async (writer, result) => {
      try {
        // Children stop when the root ends; the root settles only once they are terminal too.
        await children.drain();
        if (progressQueued) sendProgress();
        if (children.stubbed > 0) {
          const count = children.stubbed === 1 ? "1 child was" : `${children.stubbed} children were`;
          writer.appendDiagnostic({ level: "warn", code: STUBBED, message: `${count} answered by the stub harness: no model said those answers` });
        }
        const settled = settleRoot(writer, result, children.counts);
        const warnings = [...settled.warnings, ...(children.withheldTools.size > 0 ? [TOOLS_WITHHELD] : []), ...(children.stubbed > 0 ? [STUBBED] : []), ...children.repositoryWarnings];
        trace.end(settled.view, result.ok ? result.value : undefined);
        return { ...settled, warnings };
      } catch (error) {
        trace.unsettled(error); // the run's span ends even so: the trace keeps the run
        throw error;
      }
    },
  });
}

function settleRoot(writer: RunWriter, result: WorkflowResult, counts: ChildCounts): SettleResult {
  if (result.ok) {
    // A script that returns nothing still has a result: null, so readers always find a final value
    // (a listed deviation: docs/contract.md, "Deviations and additions").
    const settled = writer.settle({ outcome: "succeeded", value: result.value ?? null, children: counts });
    if (counts.failed === 0) return settled;
    return { ...settled, warnings: [...settled.warnings, HANDLED_CHILD_FAILURES] };
  }
  const outcome = OUTCOME_OF[result.error.kind] ?? "failed";
  const message = describeFailure(result.error);
  writer.appendDiagnostic({ level: "error", message: result.error.stack ?? message, ...(result.error.code ? { code: result.error.code } : {}) });
  return writer.settle({ outcome, error: { code: outcome, message }, children: counts });
}

/** Runtime events → the workflow's evidence: store lines, tool events, output messages. */
function record(writer: RunWriter, event: WorkflowEvent, trace: RunTraceHooks): void {
  if (writer.settled) return;
  if (event.type === "tool_start" || event.type === "tool_end") trace.toolCall({ index: event.index, tool: event.name, ended: event.type === "tool_end", ...(event.type === "tool_end" ? { ok: event.ok, ...(event.code ? { code: event.code } : {}) } : {}) });
  switch (event.type) {
    case "store":
      if (event.value === undefined) writer.journal({ t: "event", name: "store_delete", data: { key: event.key } });
      // Judged under the script's key, as in an object: store("db_password", pw) keeps no password.
      else writer.journal({ t: "store", key: event.key, value: redactValueUnder(event.key, event.value) });
      return;
    case "tool_start":
      return writer.journal({ t: "event", name: "tool_start", data: { index: event.index, tool: event.name } });
    case "tool_end":
      return writer.journal({ t: "event", name: "tool_end", data: { index: event.index, tool: event.name, ok: event.ok, ...(event.code ? { code: event.code } : {}) } });
    case "output":
      writer.appendOutput(event.text);
      return;
    case "heap_wait":
      // Why a nested run that has not started yet is waiting: its siblings hold its tree's heap.
      return writer.journal({ t: "event", name: "heap_wait", data: { bytes: event.bytes } });
    default:
      // agent_start/agent_end: WorkflowChildren journals children with their run IDs.
      return;
  }
}
