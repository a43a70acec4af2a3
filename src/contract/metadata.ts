import type { TSchema } from "@sinclair/typebox";
import { DelegateInputSchema, DelegateOutputSchema } from "./delegate-schema.ts";
import type { ToolName } from "./envelope.ts";
import { HelpInputSchema, HelpOutputSchema } from "./help-schema.ts";
import { RUN_ACTIONS, RunsInputSchema, RunsOutputSchema } from "./runs-schema.ts";
import { WorkflowInputSchema, WorkflowOutputSchema } from "./workflow-schema.ts";

/**
 * The executable schemas of each tool. Tool definitions register these very objects as
 * `parameters` and `outputSchema`, and external_help serves them, so help can never drift.
 */
export const TOOL_SCHEMAS: Record<ToolName, { input: TSchema; output: TSchema }> = {
  external_delegate: { input: DelegateInputSchema, output: DelegateOutputSchema },
  external_workflow: { input: WorkflowInputSchema, output: WorkflowOutputSchema },
  external_runs: { input: RunsInputSchema, output: RunsOutputSchema },
  external_help: { input: HelpInputSchema, output: HelpOutputSchema },
};

export interface ToolContractMetadata {
  actions: string[];
  purpose: string;
  semantics: string[];
  examples: { title: string; input: Record<string, unknown> }[];
}

export const TOOL_METADATA: Record<ToolName, ToolContractMetadata> = {
  external_delegate: {
    actions: ["delegate"],
    purpose: "Run one child agent, selected by Flow role or Pi agent definition, in the foreground or background.",
    semantics: [
      "Select with role or subagent_type, never both; subagent_type never takes harness. Harnesses: pi (default); claude and codex (external CLIs, harness_unavailable when their preflight fails); replay (answers from a cassette, harness_unavailable when none is configured); stub (answers with a value generated from outputSchema, no model; receipt warning stubbed).",
      "Foreground: ok is true only when the child settled done with a non-empty canonical answer.",
      "Background: ok is true once the run is accepted and registered; wait with external_runs (in a session not saved to a file, for the completion message that follows when it settles).",
      "Unknown role, subagent type or harness: selection_invalid; bad context: context_invalid; data.run is null.",
      "context none | recent N | full selects from the parent's branch frozen when the call starts.",
      "The answer is inline within 16 KiB of UTF-8 JSON after redaction, otherwise page run.refs.final.",
      "Cancelling the parent tool call stops a foreground child; background runs outlive the call.",
      "maxTurns and maxToolCalls fail closed: the first turn or tool call past one stops the child, and the run fails with a message naming the quota.",
      "resume: runId continues a settled agent run of this session with its whole conversation, on that run's harness; a live or queued run is request_invalid, saying what works then (steer a running pi child; wait for a queued run or a running claude or codex child first), an unknown or foreign one run_unavailable.",
      'isolation "worktree" (additive): the child works in its own git worktree made from the tree as you see it (HEAD, uncommitted and untracked files), in the same subdirectory; nothing reaches your tree. Its changes are kept on refs/pi-flow/<runId>, run.changes counts them, external_runs inspect view patch shows them, external_runs apply lands them. Not in a git working tree (or a bare repository): configuration_invalid before launch.',
    ],
    examples: [
      {
        title: "Foreground worker with no parent context",
        input: { role: "worker", description: "Check build", prompt: "Run the build and report.", context: { mode: "none" } },
      },
      {
        title: "Background explorer that sees the last two turns",
        input: {
          role: "explorer",
          description: "Map the parser",
          prompt: "List the modules of the parser and their jobs.",
          context: { mode: "recent", turns: 2 },
          background: true,
        },
      },
      {
        title: "Pi agent definition with a structured answer",
        input: {
          subagent_type: "security-reviewer",
          description: "Audit auth",
          prompt: "Audit src/auth for injection risks.",
          outputSchema: { type: "object", properties: { findings: { type: "array" } }, required: ["findings"] },
        },
      },
    ],
  },
  external_workflow: {
    actions: ["run"],
    purpose: "Run a workflow script (saved by name, or inline) in a QuickJS sandbox that orchestrates child agents.",
    semantics: [
      "Give exactly one of workflow and script; both or neither is request_invalid.",
      "resume: runId (alone, with description or background) continues a workflow run of this project that was interrupted, cancelled or timed out: a new run (task.resumedFrom) replays the script from its journal, answers every call that had settled without running it, and counts children.replayed and children.live. A run that succeeded returns its result; a live, failed or nested run is request_invalid; a changed saved workflow script_invalid; a call that differs from the journal fails the run.",
      "An unknown saved workflow is selection_invalid; a parse, meta or apiVersion failure is script_invalid; nothing launches.",
      "args are validated against meta.args before launch (request_invalid names the first violation).",
      "Every child selects from one parent snapshot frozen when the call starts; siblings never see each other's results.",
      "Evidence moves only as prompt text the script writes (explicit handoff); store() values never reach children.",
      "A foreground root that failed, was cancelled or timed out is ok:false with that outcome as error.code.",
      "A root that succeeded after catching child failures stays ok:true with the warning handled_child_failures.",
    ],
    examples: [
      { title: "A shipped workflow", input: { workflow: "review", args: { target: "src/parser.ts" } } },
      { title: "Resume an interrupted run", input: { resume: "wf_0mx1xga91_abcdefghij" } },
      {
        title: "An inline script in the background",
        input: {
          script: 'const r = await agent({ role: "explorer", description: "List files", prompt: "List the files." });\nreturn r.value;',
          description: "List files",
          background: true,
        },
      },
    ],
  },
  external_runs: {
    actions: [...RUN_ACTIONS],
    purpose: "Supervise runs of this session: list them, inspect them page by page, wait for them, cancel them, steer a running child.",
    semantics: [
      "ok is true when the supervision query succeeded, even when the target run failed; check run.state.outcome.",
      "inspect with several runIds and view summary returns batch entries; one run and another view returns pages.",
      "Pages are bounded by limitBytes in UTF-8; follow nextCursor and concatenate before parsing JSON pages.",
      "An unknown run, a run of another session and a pruned run are all run_unavailable.",
      "Cancelling a wait never cancels the run; cancel returns requested, which does not mean stopped.",
      "From a workflow's script, a wait that names a run that cannot settle before the workflow does (its own run, the workflow whose foreground call started it, or a workflow whose wait is on one of those) is request_invalid before anything waits.",
      "list's text cuts each run's error message after 500 characters, naming the inspect call that shows it whole; data keeps it whole.",
      "steer queues a message for one running pi child: it arrives after the child's active tool calls, before its next model request, never as an interrupt; data.status says whether it was delivered: queued, terminal (the run has ended or is ending: wait for it, then resume it), unsupported (claude and codex children cannot be steered), refused (the run's steering budget is spent for now; data.reason says which bound and when to retry), or not_started (a background run still queued for a slot; steer it once it runs).",
      'apply (additive): each finished isolation "worktree" run of runIds, in order, is merged onto the working tree 3-way against its base, all or nothing: data.results[].status applied (files), conflict (files; nothing changed), nothing_to_apply or already_applied. Nothing is staged and uncommitted edits are kept. discard drops a run\'s kept changes. A run not finished is request_invalid.',
    ],
    examples: [
      { title: "List runs", input: { action: "list", limit: 20 } },
      { title: "Batch summary", input: { action: "inspect", runIds: ["ag_0mx1xga91_abcdefghij"], view: "summary", limitBytes: 32768 } },
      { title: "Wait for all", input: { action: "wait", runIds: ["ag_0mx1xga91_abcdefghij"], mode: "all", timeoutMs: 60000 } },
      { title: "Cancel one run", input: { action: "cancel", runIds: ["ag_0mx1xga91_abcdefghij"] } },
      { title: "Steer a running child", input: { action: "steer", runIds: ["ag_0mx1xga91_abcdefghij"], message: "Also check the tests." } },
      { title: "Read a worktree child's changes", input: { action: "inspect", runIds: ["ag_0mx1xga91_abcdefghij"], view: "patch" } },
      { title: "Apply worktree children's changes in order", input: { action: "apply", runIds: ["ag_0mx1xga91_abcdefghij", "ag_0mx1xgb02_klmnopqrst"] } },
    ],
  },
  external_help: {
    actions: ["help"],
    purpose: "Discover Flow's contract: the tool index, one tool's schemas and semantics, and guides.",
    semantics: [
      "topic contracts returns the index; with tool it returns that tool's contract.",
      "Other topics (workflows, harnesses, limits, errors, roles) return text.",
      "An unknown topic, tool or harness is ok:false with selection_invalid and data null.",
    ],
    examples: [
      { title: "Contract index", input: { topic: "contracts" } },
      { title: "One tool's contract", input: { topic: "contracts", tool: "external_runs" } },
      { title: "How to write a workflow", input: { topic: "workflows" } },
      { title: "One harness", input: { topic: "harnesses", harness: "pi" } },
    ],
  },
};

/** The core rules every caller should know, as the compact index states them. */
export const CORE_RULES = [
  "Check ok, then run.state.outcome: ok is operation success, outcome is the run's.",
  "error {code,message} exists only when ok is false; isError === !ok.",
  // external_runs serves only sessions saved to a file: the index is read in every session.
  "Background ok means accepted, not finished; wait with external_runs (in a session not saved to a file, for the completion message).",
  "Values over 16 KiB are by reference: page run.refs.final (absent in a session not saved to a file).",
  "Ignore unknown fields; contractVersion is 1.",
];
