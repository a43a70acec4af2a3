import { STUBBED, STUBBED_NOTE, stubbedAcceptedNote, type ChildProgress } from "../harnesses/index.ts";
import { defineTool } from "@earendil-works/pi-coding-agent";
import { nullFieldsAsAbsent } from "./null-fields.ts";
import { DelegateInputSchema, DelegateOutputSchema } from "../contract/delegate-schema.ts";
import type { FlowToolResult } from "../contract/envelope.ts";
import type { RunView, ServedRunView } from "../contract/run-schema.ts";
import type { FlowHost } from "../orchestrator/session/index.ts";
import { repositoryWarningNotes } from "../contract/warnings.ts";
import { launchChild, prepareChild, TOOLS_WITHHELD, type ChildCall, type LaunchedChild, type SettledChild } from "../orchestrator/child/index.ts";
import { launchTurn } from "../orchestrator/child/index.ts";
import { placeChild } from "../orchestrator/child/index.ts";
import { queueFull } from "../orchestrator/child/index.ts";
import { callingWorkflowRun } from "../orchestrator/workflow/index.ts";
import { abortIfSignalled } from "./abort.ts";
import { receiptText, supervised } from "./receipt-text.ts";
import { runReceipt } from "./run-receipts.ts";
import { noteProgress } from "../orchestrator/session/index.ts";
import { delegateRenderers } from "../ui/index.ts";

const DELEGATE = { tool: "external_delegate", action: "delegate" } as const;

export interface DelegateDetails {
  runId?: string;
  phase: "rejected" | "running" | "accepted" | "settled";
  progress?: ChildProgress;
  run?: ServedRunView;
}

/** What the model reads when its child runs without tools its role asks for (warning tools_withheld). */
export function withheldNote(withheld: readonly string[]): string {
  return `Warning (${TOOLS_WITHHELD}): the child runs without ${withheld.join(", ")}: its role asks for them, but this session does not hold them.`;
}

export function createDelegateTool(host: FlowHost) {
  return defineTool({
    // Drawn for a person watching the TUI; print, JSON and RPC modes never call renderers.
    ...delegateRenderers,
    name: "external_delegate",
    label: "Delegate",
    description: [
      "Run one child agent. Select it with role (worker, explorer, reviewer, or a role file) or subagent_type (a Pi agent definition), never both. Children run on the pi harness (in-process Pi) unless harness is claude or codex (the Claude Code or Codex CLI).",
      "The child sees only its prompt unless context asks for the parent's recent turns or full history, frozen when this call starts.",
      "Foreground (default) blocks until the child settles; ok is true only for a non-empty successful answer. background: true returns once the run is accepted; wait with external_runs (in a session not saved to a file, which external_runs cannot serve, a completion message follows when it settles).",
      "Answers over 16 KiB come by reference: page run.refs.final with external_runs (in a session not saved to a file, refs are absent and a person reads the answer with /flow report). Check ok, then run.state.outcome.",
      "Cancelling this call stops a foreground child; a background child outlives the call and stops only through external_runs cancel (/flow runs <runId> cancel in a session not saved to a file) or when the session ends.",
    ].join(" "),
    promptSnippet: "Delegate one task to a child agent (foreground or background) and get its answer as a run",
    parameters: DelegateInputSchema,
    prepareArguments: nullFieldsAsAbsent,
    outputSchema: DelegateOutputSchema,
    // Parallel on purpose: a sequential tool holds Pi's session-wide queue of nested calls, so a
    // background workflow's tools.* call would block the parent's own codemode until it finished.
    // A listed deviation from the tool-calling contract: docs/contract.md, "Deviations and additions".
    async execute(toolCallId, params, signal, onUpdate, ctx): Promise<FlowToolResult<DelegateDetails>> {
      abortIfSignalled(signal);
      // Called from a workflow's tools.external_delegate: the run is that workflow's child.
      const parentRunId = callingWorkflowRun();
      // A burst of delegations creates its runs one per turn of the event loop, never all in one;
      // a child's context is still the parent's branch as its call started.
      const branch = ctx.sessionManager.getBranch();
      await launchTurn();
      abortIfSignalled(signal);
      const background = params.background ?? false;
      const isSupervised = supervised(ctx);
      let launched: LaunchedChild | undefined;
      let withheld: string[] = [];
      let stubbed = false;
      const note = () => (withheld.length > 0 ? `\n${withheldNote(withheld)}` : "");
      return runReceipt<DelegateDetails, SettledChild>({
        tool: DELEGATE,
        label: "Child",
        background,
        supervised: isSupervised,
        onUpdate,
        launch: async () => {
          host.assertOpen();
          const env = host.launchEnvironment(ctx, branch);
          const prepared = await prepareChild(params as ChildCall, env, signal);
          // The dbos backend's database answers before a child goes to a worker, or nothing launches.
          if (placeChild(prepared, env).where === "fleet") await env.fleet?.ready(signal);
          host.assertOpen(); // the session may have closed while git checked the repository
          abortIfSignalled(signal); // or the call was aborted meanwhile: then nothing launches (invariant 7)
          withheld = prepared.tools.withheld;
          stubbed = prepared.harness === "stub";
          const slots = background ? host.session(ctx).backgroundSlots : undefined;
          if (slots?.full) throw queueFull(slots, isSupervised);
          launched = launchChild(prepared, env, {
            background,
            toolCallId,
            ...(parentRunId !== undefined ? { parentRunId } : {}),
            ...(slots ? { slots } : { signal }),
            onProgress: (progress) => {
              if (background) return noteProgress(launched?.runId, { progress });
              const text = `Child ${launched?.runId ?? ""} ${progress.activity}: ${progress.usage.turns} turns, ${progress.usage.toolCalls} tool calls`;
              onUpdate?.({ content: [{ type: "text", text }], details: { runId: launched?.runId, phase: "running", progress } });
            },
          });
          if (background) host.trackBackground(ctx, launched.runId, env.runs, launched.settled);
          return launched;
        },
        // A child the stub harness will answer is marked from its acceptance, as a foreground one is when it settles.
        accepted: () => ({
          warnings: [...(withheld.length > 0 ? [TOOLS_WITHHELD] : []), ...(stubbed ? [STUBBED] : [])],
          note: `${note()}${stubbed ? `\n${stubbedAcceptedNote("this child")}` : ""}`,
        }),
        settledText: ({ view, warnings }) => `${receiptText(view, "settled", isSupervised)}${note()}${warnings.includes(STUBBED) ? `\n${STUBBED_NOTE}` : ""}${repositoryWarningNotes(warnings)}`,
      });
    },
  });
}
