import { nullFieldsAsAbsent } from "./null-fields.ts";
import { defineTool, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import { fail, succeed, type Envelope } from "../contract/envelope.ts";
import { flowToolResult } from "./tool-result.ts";
import { FlowError } from "../contract/errors.ts";
import { RunsInputSchema, RunsOutputSchema, type RunsInput } from "../contract/runs-schema.ts";
import type { FlowHost } from "../orchestrator/session/index.ts";
import type { ResultOwnership } from "../orchestrator/session/index.ts";
import { steerRun, type SteerPayload } from "../orchestrator/child/index.ts";
import { stubbedRunIds, stubbedRunsNote, waitForRuns } from "../orchestrator/session/index.ts";
import { STUBBED } from "../harnesses/index.ts";
import { callingWorkflowRun } from "../orchestrator/workflow/index.ts";
import { DEFAULT_LIST_INLINE_BYTES, outputWarnings, formatBatchText, formatListRowText, isRunId, type RunStore } from "../runs/index.ts";
import { abortIfSignalled, untilSettledOrAborted } from "./abort.ts";
import { enterWorkflowWait } from "./workflow-waits.ts";
import { supervised } from "./receipt-text.ts";
import { runsRenderers } from "../ui/index.ts";
import { CHANGES_NEED_REVIEW, changeRuns, formatChangeAnswers } from "../isolation/apply-runs.ts";

type Answer = { data: unknown; text: string; warnings?: string[] };

function onlyOneTarget(input: RunsInput): string {
  if (input.runIds?.length !== 1) throw new FlowError("request_invalid", `${input.action} takes exactly one run in runIds.`);
  return input.runIds[0]!;
}

function rejectExtras(input: RunsInput, allowed: readonly (keyof RunsInput)[]): void {
  const extra = (Object.keys(input) as (keyof RunsInput)[]).filter((key) => key !== "action" && !allowed.includes(key));
  if (extra.length > 0) throw new FlowError("request_invalid", `${input.action} does not take ${extra.join(", ")}.`);
}

function list(runs: RunStore, input: RunsInput): Answer {
  rejectExtras(input, ["limit", "cursor", "workflowCursor", "limitBytes"]);
  const page = runs.list({
    inlineBytes: input.limitBytes ?? DEFAULT_LIST_INLINE_BYTES,
    ...(input.limit !== undefined ? { limit: input.limit } : {}),
    ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
    ...(input.workflowCursor !== undefined ? { workflowCursor: input.workflowCursor } : {}),
  });
  // Each row's error message is cut in the text (LIST_ERROR_CHARS); the envelope keeps it whole.
  const rows = [...page.runs, ...page.workflows].map(formatListRowText);
  const more = [
    page.nextCursor ? `More agent runs: cursor ${JSON.stringify(page.nextCursor)}.` : "",
    page.nextWorkflowCursor ? `More workflows: workflowCursor ${JSON.stringify(page.nextWorkflowCursor)}.` : "",
  ].filter(Boolean);
  const text = [rows.length > 0 ? rows.join("\n\n") : "No runs on this page.", ...more].join("\n\n");
  return { data: page, text, warnings: outputWarnings([...page.runs, ...page.workflows]) };
}

function inspect(runs: RunStore, input: RunsInput): Answer {
  rejectExtras(input, ["runIds", "view", "limitBytes", "cursor"]);
  const payload = runs.inspect({
    runIds: input.runIds,
    view: input.view,
    ...(input.limitBytes !== undefined ? { limitBytes: input.limitBytes } : {}),
    ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
  });
  if (payload.mode === "batch") {
    // The batch byte rule holds for exactly this text: send it unchanged.
    return { data: payload, text: formatBatchText(payload.entries, payload.nextCursor), warnings: outputWarnings(payload.entries) };
  }
  const { page } = payload;
  const fallback =
    payload.view === "final" && payload.finalAvailable === false
      ? `Run ${payload.runId} has no final result (finalAvailable: false).`
      : `Run ${payload.runId} has no ${payload.view} evidence${payload.outputStatus ? ` (${payload.outputStatus})` : ""}.`;
  const more = page.nextCursor ? `\n\n[more: call again with cursor ${JSON.stringify(page.nextCursor)}]` : "";
  // An empty page says why in words, also while the run is still going (the page is not complete then).
  const going = page.complete ? "" : " yet; the run is still going";
  if (page.text === "" && !page.nextCursor) return { data: payload, text: `${fallback.replace(/\.$/, "")}${going}.` };
  return { data: payload, text: `${page.text}${more}` };
}

function cancel(runs: RunStore, input: RunsInput): Answer {
  rejectExtras(input, ["runIds"]);
  const payload = runs.cancel(onlyOneTarget(input));
  const text =
    payload.status === "terminal"
      ? `Run ${payload.runId} had already ended; nothing to cancel.`
      : `Cancel requested for run ${payload.runId}; it has not necessarily stopped yet. Wait for it with external_runs ${JSON.stringify({ action: "wait", runIds: [payload.runId] })}.`;
  return { data: payload, text };
}

function steerText({ runId, status, held, reason }: SteerPayload): string {
  if (status === "refused") return `Steer refused, not delivered: ${reason ?? `run ${runId}'s steering budget is spent for now.`}`;
  // Also answered while the run is still ending, when a resume would be refused as live: wait first.
  if (status === "terminal") {
    const wait = JSON.stringify({ action: "wait", runIds: [runId] });
    return `Run ${runId} has ended or is ending; the message was not delivered. Wait for it with external_runs ${wait}, then continue it with external_delegate resume: "${runId}".`;
  }
  if (status === "not_started") return `Run ${runId} has not started: it waits for ${reason ?? "a background slot"}, so the message was not delivered. Steer it once it runs.`;
  if (status === "unsupported") {
    // A resume right after the cancel is refused while the run still stops: the wait comes between.
    const cancel = JSON.stringify({ action: "cancel", runIds: [runId] });
    const wait = JSON.stringify({ action: "wait", runIds: [runId] });
    return `Run ${runId} cannot be steered: its harness's CLI runs one prompt non-interactively, so the message was not delivered. Cancel it with external_runs ${cancel}, wait for it with external_runs ${wait}, then resume it with a new prompt (external_delegate resume: "${runId}").`;
  }
  return held
    ? `Steer held for run ${runId}: its child is starting, and gets the message when its session opens.`
    : `Steer queued for run ${runId}: the child reads it after its current tool calls, before its next model request.`;
}

async function steer(runs: RunStore, input: RunsInput, signal: AbortSignal | undefined): Promise<Answer> {
  rejectExtras(input, ["runIds", "message"]);
  // A fleet child's steer waits for its database's answer, which a silent database can hold for a
  // minute: Esc frees the call (the message may still reach the child, as one sent just before Esc).
  const payload = await untilSettledOrAborted(steerRun(runs, onlyOneTarget(input), input.message), signal);
  return { data: payload, text: steerText(payload) };
}

async function wait(
  ownership: ResultOwnership,
  runs: RunStore,
  input: RunsInput,
  signal: AbortSignal | undefined,
  onWaiting: (text: string) => void,
): Promise<Answer> {
  rejectExtras(input, ["runIds", "mode", "limitBytes", "timeoutMs"]);
  // Refused when a target cannot settle before this workflow does; recorded while it waits.
  const leave = enterWorkflowWait(runs, callingWorkflowRun(), input.runIds, input.mode ?? "all", input.timeoutMs !== undefined);
  const request = {
    runIds: input.runIds,
    ...(input.mode !== undefined ? { mode: input.mode } : {}),
    ...(input.limitBytes !== undefined ? { limitBytes: input.limitBytes } : {}),
    ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
  };
  try {
    const { payload, text } = await waitForRuns(runs, ownership, request, signal, onWaiting);
    // A canned answer handed over is marked as on a foreground receipt: in the warnings and the text.
    const stubbed = stubbedRunIds(runs, payload.completed);
    if (stubbed.length === 0) return { data: payload, text, warnings: outputWarnings(payload.completed) };
    return { data: payload, text: `${text}\n\n${stubbedRunsNote(stubbed)}`, warnings: [...outputWarnings(payload.completed), STUBBED] };
  } finally {
    leave();
  }
}

function answerAction(
  ownership: ResultOwnership,
  runs: RunStore,
  input: RunsInput,
  signal: AbortSignal | undefined,
  onWaiting: (text: string) => void,
): Answer | Promise<Answer> {
  switch (input.action) {
    case "list":
      return list(runs, input);
    case "inspect":
      return inspect(runs, input);
    case "cancel":
      return cancel(runs, input);
    case "wait":
      return wait(ownership, runs, input, signal, onWaiting);
    case "steer":
      return steer(runs, input, signal);
    case "apply":
    case "discard": {
      rejectExtras(input, ["runIds"]);
      const action = input.action;
      // A run whose applied files need a person's review (results[].review) is named in the envelope's warnings too.
      // Esc stops a wait for the repository lock (tool-calling contract, invariant 6): an AbortError, nothing more applied.
      return changeRuns(runs, action, input.runIds, { onWaiting, ...(signal ? { signal } : {}) }).then((results) => ({
        data: { results },
        text: formatChangeAnswers(results, action),
        warnings: results.some((result) => result.review) ? [CHANGES_NEED_REVIEW] : [],
      }));
    }
  }
}

/** What works in a session external_runs refuses, by the action asked for. */
function unsupervisedInstead(input: RunsInput): string {
  // Only a well-formed ID is echoed back in the advice.
  const named = "runIds" in input && input.runIds?.length === 1 ? input.runIds[0] : undefined;
  const runId = isRunId(named) ? named : "<runId>";
  switch (input.action) {
    case "cancel":
      return `A person stops a run with /flow runs ${runId} cancel; background runs also stop when the session ends.`;
    case "steer":
      return "A run cannot be steered here: once it ends, continue it with external_delegate resume.";
    case "apply":
    case "discard":
      return `A person lands or drops a run's kept changes with /flow ${input.action} ${runId}.`;
    default:
      // A script never sees completion messages: its way to children's results is agent().
      return callingWorkflowRun() !== undefined
        ? "In a workflow, run children with agent() (parallel() for many): it returns each child's whole value."
        : "A background run's result comes in its completion message; a person reads runs with /flow runs.";
  }
}

/** Supervision needs a persisted originating session: runs are partitioned by it. */
function assertPersisted(ctx: ExtensionContext, input: RunsInput): void {
  if (!supervised(ctx)) {
    throw new FlowError("session_unavailable", `external_runs needs a session saved to a file; this one is in memory only. ${unsupervisedInstead(input)}`);
  }
}

export function createRunsTool(host: FlowHost) {
  return defineTool({
    // Drawn for a person watching the TUI; print, JSON and RPC modes never call renderers.
    ...runsRenderers,
    name: "external_runs",
    label: "Flow runs",
    description: [
      "Supervise this session's runs (children and workflows).",
      "list: runs and workflows, newest first, in two cursor streams (cursor, workflowCursor); each stream's inline values spend limitBytes (default 32 KiB), later ones are delivered by reference.",
      "inspect: with view summary (default) and one or more runIds, batch entries; with one run and view launch, output, diagnostics or final, one page bounded by limitBytes (follow nextCursor, concatenate JSON pages before parsing).",
      "wait: until all (or any, with mode any) targets settle or timeoutMs passes, and returns early when a workflow target ends unsuccessfully; pending runs are never cancelled, and cancelling the wait never cancels a run.",
      "cancel: ask one run to stop; requested does not mean stopped.",
      "steer: with one running agent run and a message, queue the message for that child: it arrives after the child's active tool calls and before its next model request, never as an interrupt. data.status queued means accepted for the child (not yet acted on; one the child ends before reading is noted in its diagnostics as steer_undelivered); terminal (the run has ended or is ending: wait for it, then continue it with external_delegate resume), unsupported (a claude or codex child), refused (the run's steering budget is spent for now: data.reason says which bound) and not_started (a background run still waiting for a slot: steer it once it runs) mean it was not. Unread steers reach the child together in one request.",
      'apply: with one or more finished isolation "worktree" runs, in order, merge each run\'s kept changes onto the working tree (3-way against its base), all or nothing per run: data.results[].status applied (files; review: files to read before running anything, such as hooks, .envrc, CI workflows, changed npm scripts or links out of the tree, also warned as changes_need_review), conflict (the conflicting files; nothing changed), nothing_to_apply or already_applied. Nothing is staged; uncommitted edits are kept. discard: drop runs\' kept changes. Read them first with inspect view patch.',
      "ok means the query worked even when the run failed: check run.state.outcome.",
    ].join(" "),
    promptSnippet: "List, inspect, wait for, cancel or steer pi-flow runs",
    parameters: RunsInputSchema,
    prepareArguments: nullFieldsAsAbsent,
    outputSchema: RunsOutputSchema,
    async execute(_toolCallId, params, signal, onUpdate, ctx) {
      abortIfSignalled(signal);
      let answer: Answer;
      try {
        assertPersisted(ctx, params);
        const onWaiting = (text: string) => onUpdate?.({ content: [{ type: "text", text }], details: { action: params.action } });
        answer = await answerAction(host.session(ctx).ownership, host.runStore(ctx), params, signal, onWaiting);
      } catch (error) {
        if (!(error instanceof FlowError)) throw error;
        const envelope: Envelope<unknown, null> = fail("external_runs", params.action, error.code, error.message, null);
        return flowToolResult(envelope, `external_runs ${params.action} failed (${error.code}): ${error.message}`, { action: params.action });
      }
      const envelope = succeed("external_runs", params.action, answer.data, answer.warnings ?? []);
      return flowToolResult(envelope, answer.text, { action: params.action });
    },
  });
}
