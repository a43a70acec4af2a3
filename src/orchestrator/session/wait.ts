import { FlowError } from "../../contract/errors.ts";
import type { RunView } from "../../contract/run-schema.ts";
import { assertRunId, formatRunText, INLINE_LIMIT_BYTES, jsonBytes, MAX_PAGE_BYTES, type RunStore } from "../../runs/index.ts";
import type { ResultOwnership, WaitClaim } from "./ownership.ts";

export const MAX_WAIT_TARGETS = 50;
export const DEFAULT_WAIT_BYTES = 32 * 1024;
/** The message of the error an aborted wait throws; the runs it waited for go on. */
export const WAIT_ABORTED = "Run wait aborted";

export interface WaitRequest {
  runIds: unknown;
  mode?: "all" | "any";
  limitBytes?: number;
  timeoutMs?: number;
}

export interface WaitPayload {
  mode: "all" | "any";
  completed: RunView[];
  pending: string[];
}

/** Node's timers fire at once past 2^31 - 1 ms: a longer wait is armed again in steps. */
const TIMER_MAX_MS = 2 ** 31 - 1;

export function longTimeout(fire: () => void, ms: number): { clear(): void } {
  let timer: NodeJS.Timeout;
  const arm = (left: number) => {
    timer = setTimeout(() => (left > TIMER_MAX_MS ? arm(left - TIMER_MAX_MS) : fire()), Math.min(left, TIMER_MAX_MS));
  };
  arm(ms);
  return { clear: () => clearTimeout(timer) };
}

function targetsOf(runIds: unknown): string[] {
  if (!Array.isArray(runIds) || runIds.length === 0) throw new FlowError("request_invalid", "wait needs runIds, at least one.");
  if (runIds.length > MAX_WAIT_TARGETS) throw new FlowError("request_invalid", `wait takes at most ${MAX_WAIT_TARGETS} runIds.`);
  const ids = runIds.map(assertRunId);
  if (new Set(ids).size !== ids.length) throw new FlowError("request_invalid", "runIds lists a run more than once.");
  return ids;
}

const unsuccessfulWorkflow = (view: RunView) => view.kind === "workflow" && view.state.outcome !== "succeeded";

/**
 * Waits for runs without ever cancelling them. Every target is checked before anything waits
 * (unknown: run_unavailable; no live owner and unfinished: run_not_live). The wait claims each
 * result before it awaits, and gives back every claim it did not deliver.
 */
export async function waitForRuns(
  runs: RunStore,
  ownership: ResultOwnership,
  request: WaitRequest,
  signal: AbortSignal | undefined,
  onWaiting?: (text: string) => void,
): Promise<{ payload: WaitPayload; text: string }> {
  const targets = targetsOf(request.runIds);
  const mode = request.mode ?? "all";
  const completions = targets.map((runId) => runs.settled(runId));
  const settled = new Map<string, RunView>();
  const claims = new Map<string, WaitClaim>(targets.map((runId) => [runId, ownership.claim(runId)]));
  try {
    // Inside the try: a throwing update hook must give the claims back like an abort does.
    onWaiting?.(`Waiting for ${mode === "all" ? "all of" : "any of"} ${targets.join(", ")}.`);
    await new Promise<void>((resolve, reject) => {
      let closing = false;
      const done = () => {
        if (settled.size === targets.length) return finish(resolve);
        if (closing || !((mode === "any" && settled.size > 0) || [...settled.values()].some(unsuccessfulWorkflow))) return;
        // Returning before every target settled: first let every target that has already settled
        // report (their completions resolve in this same turn), so none is called pending.
        closing = true;
        setImmediate(() => finish(resolve));
      };
      const timer = request.timeoutMs === undefined ? undefined : longTimeout(() => finish(resolve), request.timeoutMs);
      // An AbortError, as every aborted operation rejects (tool-calling contract §5.3); its message says what stopped.
      const onAbort = () => finish(() => reject(new DOMException(WAIT_ABORTED, "AbortError")));
      let finished = false;
      const finish = (settle: () => void) => {
        if (finished) return;
        finished = true;
        timer?.clear();
        signal?.removeEventListener("abort", onAbort);
        settle();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      completions.forEach((completion, index) =>
        void completion.then((view) => {
          if (finished) return;
          settled.set(targets[index]!, view);
          done();
        }),
      );
    });
  } catch (error) {
    for (const claim of claims.values()) claim.release();
    throw error;
  }
  for (const [runId, claim] of claims) (settled.has(runId) ? claim.observed : claim.release)();
  return spendBudgets(runs, targets, settled, mode, Math.min(request.limitBytes ?? DEFAULT_WAIT_BYTES, MAX_PAGE_BYTES));
}

const bytes = (text: string) => Buffer.byteLength(text, "utf8") + 2; // each entry ends with a blank line

/** The run as delivered by reference: no value in either channel, only the refs to page it. */
function byReference(view: RunView): RunView {
  const { value: _value, ...output } = view.output;
  return { ...view, output: { ...output, delivery: view.output.finalAvailable ? "reference" : "none" } };
}

/**
 * Spends the two byte budgets in request order. A value stays inline only when it is held in
 * memory, fits 16 KiB and the structured budget left, and its text goes out whole; otherwise both
 * channels deliver the run by reference. A run whose text no longer fits is named in a closing
 * line, with the pending runs: the IDs a caller needs next are always in the text.
 */
function spendBudgets(
  runs: RunStore,
  targets: string[],
  settled: Map<string, RunView>,
  mode: "all" | "any",
  limitBytes: number,
): { payload: WaitPayload; text: string } {
  let textLeft = limitBytes;
  let structuredLeft = limitBytes;
  const completed: RunView[] = [];
  const lines: string[] = [];
  const omitted: string[] = [];
  for (const runId of targets) {
    const view = settled.get(runId);
    if (!view) continue;
    const held = runs.registry.get(runId)?.final !== undefined;
    const valueBytes = view.output.delivery === "inline" ? (jsonBytes(view.output.value) ?? Infinity) : Infinity;
    let delivered = held && valueBytes <= INLINE_LIMIT_BYTES && valueBytes <= structuredLeft ? view : byReference(view);
    let text = formatRunText(delivered);
    if (bytes(text) > textLeft && delivered === view && view.output.delivery === "inline") {
      delivered = byReference(view);
      text = formatRunText(delivered);
    }
    if (bytes(text) <= textLeft) {
      lines.push(text);
      textLeft -= bytes(text);
    } else omitted.push(runId);
    if (delivered.output.delivery === "inline") structuredLeft -= valueBytes;
    completed.push(delivered);
  }
  const pending = targets.filter((runId) => !settled.has(runId));
  if (omitted.length > 0) lines.push(`Also finished, over limitBytes for this text (see the structured result): ${omitted.join(", ")}.`);
  if (pending.length > 0) lines.push(`Still running (not cancelled): ${pending.join(", ")}.`);
  return { payload: { mode, completed, pending }, text: lines.join("\n\n") };
}
