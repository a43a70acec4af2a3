import { fail, succeed, toToolResult, type FlowToolResult } from "../contract/envelope.ts";
import type { FlowError } from "../contract/errors.ts";
import type { RunView } from "../contract/run-schema.ts";
import { toPiUsage } from "../harnesses/usage.ts";
import { receiptText } from "./receipt-text.ts";

/** The tools whose receipts carry a run, and their one action each. */
type RunTool = { tool: "external_delegate"; action: "delegate" } | { tool: "external_workflow"; action: "run" };

/** A typed failure before registration: ok:false with `data.run` null, nothing launched. */
export function rejectedReceipt<TDetails>({ tool, action }: RunTool, error: FlowError, details: TDetails): FlowToolResult<TDetails> {
  const envelope = fail(tool, action, error.code, error.message, { run: null });
  return toToolResult(envelope, `${tool} rejected (${error.code}): ${error.message}`, details);
}

/** A background launch: ok once accepted and registered, not finished. */
export function acceptedReceipt<TDetails>(
  { tool, action }: RunTool,
  view: RunView,
  supervised: boolean,
  details: TDetails,
  warnings: string[] = [],
  note = "",
): FlowToolResult<TDetails> {
  return toToolResult(succeed(tool, action, { run: view }, warnings), `${receiptText(view, "accepted", supervised)}${note}`, details);
}

/**
 * A foreground run that settled: ok only when it succeeded; otherwise its outcome is the error
 * code (cancelled, timed_out, or failed) and the run, with its evidence, stays in `data.run`.
 */
export function settledReceipt<TDetails>(
  { tool, action }: RunTool,
  view: RunView,
  warnings: string[],
  text: string,
  details: TDetails,
): FlowToolResult<TDetails> {
  return withUsage(settledEnvelope(tool, action, view, warnings, text, details), view);
}

function settledEnvelope<TDetails>(tool: RunTool["tool"], action: RunTool["action"], view: RunView, warnings: string[], text: string, details: TDetails) {
  if (view.state.outcome === "succeeded") return toToolResult(succeed(tool, action, { run: view }, warnings), text, details);
  const code = view.state.outcome === "cancelled" || view.state.outcome === "timed_out" ? view.state.outcome : "failed";
  const message = view.state.error?.message ?? `The run ended ${view.state.outcome ?? view.state.status}.`;
  return toToolResult(fail(tool, action, code, message, { run: view }, warnings), text, details);
}

/** A settled foreground run carries what it spent, so Pi's session totals include its children. */
function withUsage<TDetails>(result: FlowToolResult<TDetails>, view: RunView): FlowToolResult<TDetails> {
  const usage = toPiUsage(view.usage);
  return usage ? { ...result, usage } : result;
}
