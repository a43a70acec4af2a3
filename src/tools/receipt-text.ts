import type { RunView } from "../contract/run-schema.ts";
import { NOT_SUPERVISED } from "../runs/index.ts";

const call = (value: unknown) => JSON.stringify(value);

/** Whether external_runs can serve this session: it needs a persisted one. */
export function supervised(ctx: { sessionManager: { getSessionFile(): string | undefined } }): boolean {
  return ctx.sessionManager.getSessionFile() !== undefined;
}

/** external_runs serves persisted sessions only; in any other, no receipt may send the model there. */
const UNSUPERVISED = NOT_SUPERVISED;

/**
 * The model-facing content of a run receipt: the outcome first, then the run ID, then the one
 * thing to call next. The envelope (structuredContent) carries the rest. `canSupervise` says
 * whether external_runs can serve this session.
 */
export function receiptText(view: RunView, phase: "accepted" | "settled", canSupervise = true): string {
  const noun = view.kind === "workflow" ? "Workflow run" : "Child run";
  if (phase === "accepted") {
    const next = canSupervise
      ? `Wait for it: external_runs ${call({ action: "wait", runIds: [view.runId] })}. Otherwise a completion message follows when it settles.`
      : `A completion message follows when it settles. ${UNSUPERVISED}.`;
    // Accurate about queued versus running (tool-calling contract §6.1): a queued run waits for a background slot.
    const state = view.state.status === "queued" ? "queued in the background: it starts when a background slot frees (not started)" : "accepted in the background (not finished)";
    return [`${noun} ${view.runId} ${state}.`, next].join("\n");
  }
  const outcome = view.state.outcome ?? view.state.status;
  const lines = [`${noun} ${view.runId} ${outcome}.`];
  if (view.state.error) lines.push(`Error (${view.state.error.code}): ${view.state.error.message}`);
  if (view.children) {
    lines.push(`Children: ${view.children.count}${view.children.failed === undefined ? "" : `, ${view.children.failed} failed`}.`);
  }
  if (view.output.delivery === "inline") {
    const value = typeof view.output.value === "string" ? view.output.value : JSON.stringify(view.output.value, null, 2);
    lines.push(view.output.redacted ? "Answer (secrets redacted):" : "Answer:", value);
  } else if (view.output.delivery === "reference") {
    lines.push(
      canSupervise
        ? `The answer is too large to inline. Page it: external_runs ${call(view.refs.final)} with limitBytes and cursor.`
        : `The answer is too large to inline (over 16 KiB). ${UNSUPERVISED}: a person reads it with /flow report ${view.runId}; ask for a shorter answer if you need it here.`,
    );
  } else if (canSupervise && outcome !== "succeeded" && view.refs.diagnostics) {
    lines.push(`Evidence: external_runs ${call(view.refs.diagnostics)}.`);
  }
  return lines.join("\n");
}
