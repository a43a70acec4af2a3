import { STUBBED, STUBBED_NOTE, stubbedAcceptedNote } from "../harnesses/index.ts";
import { defineTool } from "@earendil-works/pi-coding-agent";
import { nullFieldsAsAbsent } from "./null-fields.ts";
import type { FlowToolResult } from "../contract/envelope.ts";
import { servedView, type RunView, type ServedRunView } from "../contract/run-schema.ts";
import { WorkflowInputSchema, WorkflowOutputSchema, type WorkflowInput } from "../contract/workflow-schema.ts";
import type { FlowHost } from "../orchestrator/session/index.ts";
import { TOOLS_WITHHELD } from "../orchestrator/child/index.ts";
import { repositoryWarningNotes } from "../contract/warnings.ts";
import { queuedLabel, waitsForWorker, type ChildEntry } from "../contract/child-entry.ts";
import { HANDLED_CHILD_FAILURES, launchWorkflow, type WorkflowProgress } from "../orchestrator/workflow/index.ts";
import type { SettleResult } from "../runs/index.ts";
import { abortIfSignalled } from "./abort.ts";
import { receiptText, supervised } from "./receipt-text.ts";
import { runReceipt, settledReceipt } from "./run-receipts.ts";
import { noteProgress } from "../orchestrator/session/index.ts";
import { workflowRenderers } from "../ui/index.ts";

const WORKFLOW = { tool: "external_workflow", action: "run" } as const;

export interface WorkflowDetails {
  runId?: string;
  phase: "rejected" | "running" | "accepted" | "settled";
  children?: readonly ChildEntry[];
  run?: ServedRunView;
  /** The root's evidence writes that failed (`journal: EFBIG`…), with the warning evidence_incomplete. */
  evidenceErrors?: string[];
}

const MAX_LISTED = 8;

/**
 * A child's entry as a progress update shows it. Entries change while their child runs, so a
 * running child is copied for each update; a settled one never changes again, so its one copy is
 * shared by every later update (a fan-out of a thousand costs its running children per update,
 * not all of them).
 */
const settledSnapshots = new WeakMap<ChildEntry, ChildEntry>();
function snapshotOf(child: ChildEntry): ChildEntry {
  if (child.status === "running") return { ...child };
  let copy = settledSnapshots.get(child);
  if (!copy) settledSnapshots.set(child, (copy = { ...child }));
  return copy;
}

/**
 * "2 running, 3 finished: review correctness (running), …", running children first. On the dbos
 * backend, children no worker has taken yet come first, as "1 queued, …: part 3 (queued)", or, given
 * back by a worker, "part 3 (queued again: w1 handed it back)".
 */
export function progressText(progress: WorkflowProgress): string {
  const queued = progress.children.filter(waitsForWorker);
  const running = progress.children.filter((child) => child.status === "running" && !waitsForWorker(child));
  const finished = progress.children.filter((child) => child.status !== "running");
  const listed = [...queued, ...running, ...finished].slice(0, MAX_LISTED).map((child) => `${child.description} (${waitsForWorker(child) ? queuedLabel(child) : child.status})`);
  const more = progress.children.length > MAX_LISTED ? `, and ${progress.children.length - MAX_LISTED} more` : "";
  const waiting = queued.length > 0 ? `${queued.length} queued, ` : "";
  const head = `Workflow ${progress.runId}: ${waiting}${running.length} running, ${finished.length} finished`;
  return listed.length === 0 ? `${head}.` : `${head}: ${listed.join(", ")}${more}.`;
}

function settledText(view: RunView, warnings: readonly string[], isSupervised: boolean): string {
  let text = receiptText(view, "settled", isSupervised);
  if (warnings.includes(STUBBED)) text += `\n${STUBBED_NOTE}`;
  if (warnings.includes(TOOLS_WITHHELD)) {
    text += `\nWarning (${TOOLS_WITHHELD}): some agent() children ran without tools their roles ask for, which this session does not hold; each child's launch view lists its tools.`;
  }
  text += repositoryWarningNotes(warnings);
  if (!warnings.includes(HANDLED_CHILD_FAILURES)) return text;
  const failed = view.children?.failed ?? 0;
  return `${text}\nThe workflow succeeded after handling ${failed} failed agent() call${failed === 1 ? "" : "s"} (warning ${HANDLED_CHILD_FAILURES}): check that its result accounts for them.`;
}

/** Resuming a run that had already succeeded: its own settled receipt, and nothing runs. */
function resumedReceipt(view: RunView, isSupervised: boolean): FlowToolResult<WorkflowDetails> {
  const text = `${receiptText(view, "settled", isSupervised)}\nRun ${view.runId} had already succeeded: this is its result; nothing ran again.`;
  // Its usage was counted when it ran; this call spent nothing.
  const { usage: _spentBefore, ...receipt } = settledReceipt(WORKFLOW, view, isSupervised, [], text, { runId: view.runId, phase: "settled" as const, run: servedView(view, isSupervised) });
  return receipt;
}

export function createWorkflowTool(host: FlowHost) {
  return defineTool({
    // Drawn for a person watching the TUI; print, JSON and RPC modes never call renderers.
    ...workflowRenderers,
    name: "external_workflow",
    label: "Workflow",
    description: [
      "Run a workflow script that orchestrates child agents in a sandbox: a saved workflow by name (shipped review, map, handoff, parallel-edit; or the project's .pi/flow/workflows/) or an inline script, never both.",
      "Scripts call agent() (same roles and options as external_delegate), store()/load(), tools.* and helpers (parallel, retry, readFinal, handoff); external_help topic workflows explains them.",
      "Every child sees the parent as it was when this call started, never a sibling's result unless the script puts it in a prompt.",
      "Foreground (default) blocks until the root settles; ok is false when it failed, was cancelled or timed out. background: true returns once accepted; wait with external_runs (in a session not saved to a file, which external_runs cannot serve, a completion message follows when it settles).",
      "Cancelling this call stops a foreground root and every child it waits on (a run the script starts with background: true goes on); a background run outlives the call and stops only through external_runs cancel (/flow runs <runId> cancel in a session not saved to a file) or when the session ends.",
    ].join(" "),
    promptSnippet: "Run a saved or inline workflow script that fans out child agents and returns the script's result as a run",
    parameters: WorkflowInputSchema,
    prepareArguments: nullFieldsAsAbsent,
    outputSchema: WorkflowOutputSchema,
    // Parallel on purpose: a sequential tool holds Pi's session-wide queue of nested calls, so a
    // background workflow's tools.* call would block the parent's own codemode until it finished.
    // A listed deviation from the tool-calling contract: docs/contract.md, "Deviations and additions".
    async execute(toolCallId, params, signal, onUpdate, ctx): Promise<FlowToolResult<WorkflowDetails>> {
      abortIfSignalled(signal);
      const background = params.background ?? false;
      const isSupervised = supervised(ctx);
      let stubbedEvery = false;
      return runReceipt<WorkflowDetails, SettleResult>({
        tool: WORKFLOW,
        label: "Workflow",
        background,
        supervised: isSupervised,
        onUpdate,
        launch: async () => {
          host.assertOpen();
          const env = { launch: host.launchEnvironment(ctx), ctx, flowHome: host.settings.flowHome, toolInfos: () => host.toolInfos() };
          stubbedEvery = env.launch.harnesses.stub?.every === true;
          await env.launch.fleet?.ready(signal); // the dbos backend's database answers, or nothing launches
          // The session may have closed, or the call been aborted, while it awaited: then nothing launches.
          host.assertOpen();
          abortIfSignalled(signal);
          const started = await launchWorkflow(
            {
              input: params,
              toolCallId,
              signal,
              slots: host.session(ctx).backgroundWorkflowSlots,
              beforeStart: () => {
                host.assertOpen();
                abortIfSignalled(signal);
              },
              onProgress: (progress) => {
                const children = progress.children.map(snapshotOf);
                if (background) return noteProgress(progress.runId, { children });
                onUpdate?.({ content: [{ type: "text", text: progressText(progress) }], details: { runId: progress.runId, phase: "running", children } });
              },
            },
            env,
          );
          // A run that succeeded has its result already: nothing runs again.
          if ("succeeded" in started) return resumedReceipt(started.succeeded, isSupervised);
          if (background) host.trackBackground(ctx, started.runId, env.launch.runs, started.settled);
          return started;
        },
        // With flow.stub on, every agent() child will be stubbed: the accepted receipt says so. A script's
        // own harness: "stub" is known only as it runs, so that warning comes with the settled run.
        accepted: () => (stubbedEvery ? { warnings: [STUBBED], note: `\n${stubbedAcceptedNote("every agent() child of this workflow")}` } : { warnings: [], note: "" }),
        settledText: ({ view, warnings }) => settledText(view, warnings, isSupervised),
        settledDetails: ({ evidenceErrors }) => (evidenceErrors.length > 0 ? { evidenceErrors } : {}),
      });
    },
  });
}
