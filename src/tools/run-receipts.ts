import { fail, succeed, type FlowToolResult } from "../contract/envelope.ts";
import { flowToolResult } from "./tool-result.ts";
import { FlowError } from "../contract/errors.ts";
import { servedView, type RunView, type ServedRunView } from "../contract/run-schema.ts";
import { toPiUsage } from "../harnesses/index.ts";
import { receiptText } from "./receipt-text.ts";

/** The tools whose receipts carry a run, and their one action each. */
type RunTool = { tool: "external_delegate"; action: "delegate" } | { tool: "external_workflow"; action: "run" };

/** A typed failure before registration: ok:false with `data.run` null, nothing launched. */
export function rejectedReceipt<TDetails>({ tool, action }: RunTool, error: FlowError, details: TDetails): FlowToolResult<TDetails> {
  const envelope = fail(tool, action, error.code, error.message, { run: null });
  return flowToolResult(envelope, `${tool} rejected (${error.code}): ${error.message}`, details);
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
  return flowToolResult(succeed(tool, action, { run: servedView(view, supervised) }, warnings), `${receiptText(view, "accepted", supervised)}${note}`, details);
}

/**
 * A foreground run that settled: ok only when it succeeded; otherwise its outcome is the error
 * code (cancelled, timed_out, or failed) and the run, with its evidence, stays in `data.run`.
 */
export function settledReceipt<TDetails>(
  { tool, action }: RunTool,
  view: RunView,
  supervised: boolean,
  warnings: string[],
  text: string,
  details: TDetails,
): FlowToolResult<TDetails> {
  return withUsage(settledEnvelope(tool, action, view, supervised, warnings, text, details), view);
}

function settledEnvelope<TDetails>(tool: RunTool["tool"], action: RunTool["action"], view: RunView, supervised: boolean, warnings: string[], text: string, details: TDetails) {
  const run = servedView(view, supervised);
  if (view.state.outcome === "succeeded") return flowToolResult(succeed(tool, action, { run }, warnings), text, details);
  const code = view.state.outcome === "cancelled" || view.state.outcome === "timed_out" ? view.state.outcome : "failed";
  const message = view.state.error?.message ?? `The run ended ${view.state.outcome ?? view.state.status}.`;
  return flowToolResult(fail(tool, action, code, message, { run }, warnings), text, details);
}

/** A settled foreground run carries what it spent, so Pi's session totals include its children. */
function withUsage<TDetails>(result: FlowToolResult<TDetails>, view: RunView): FlowToolResult<TDetails> {
  const usage = toPiUsage(view.usage);
  return usage ? { ...result, usage } : result;
}

/** The details every run receipt carries, whatever else its tool adds. */
export interface RunDetails {
  runId?: string;
  phase: "rejected" | "running" | "accepted" | "settled";
  /** As the receipt serves it: without refs in a session external_runs cannot supervise, so the row never points there. */
  run?: ServedRunView;
}

/** A run a tool launched: accepted now, settled later (never rejects). */
export interface LaunchedRun<Settled extends { view: RunView; warnings: string[] }> {
  runId: string;
  accepted: RunView;
  settled: Promise<Settled>;
}

export interface ReceiptFrame<TDetails extends RunDetails, Settled extends { view: RunView; warnings: string[] }> {
  tool: RunTool;
  /** How the started update names the run: "Child", "Workflow". */
  label: string;
  background: boolean;
  supervised: boolean;
  onUpdate?: ((update: { content: { type: "text"; text: string }[]; details: TDetails }) => void) | undefined;
  /** Launches the run (a FlowError it throws is the rejected receipt), or answers with a receipt of its own. */
  launch(): LaunchedRun<Settled> | FlowToolResult<TDetails> | Promise<LaunchedRun<Settled> | FlowToolResult<TDetails>>;
  /** A background run's accepted receipt: extra warnings and a note for the model. */
  accepted?(): { warnings: string[]; note: string };
  settledText(settled: Settled): string;
  /** What the settled details add to runId, phase and run. */
  settledDetails?(settled: Settled): Partial<TDetails>;
}

/**
 * The one receipt skeleton of external_delegate and external_workflow: rejected before
 * registration, accepted (background), or started and then settled (foreground).
 */
export async function runReceipt<TDetails extends RunDetails, Settled extends { view: RunView; warnings: string[] }>(
  frame: ReceiptFrame<TDetails, Settled>,
): Promise<FlowToolResult<TDetails>> {
  let launched: LaunchedRun<Settled> | FlowToolResult<TDetails>;
  try {
    launched = await frame.launch();
  } catch (error) {
    if (!(error instanceof FlowError)) throw error;
    return rejectedReceipt(frame.tool, error, { phase: "rejected" } as TDetails);
  }
  if (!("accepted" in launched)) return launched;
  const { runId, accepted } = launched;
  if (frame.background) {
    const { warnings, note } = frame.accepted?.() ?? { warnings: [], note: "" };
    return acceptedReceipt(frame.tool, accepted, frame.supervised, { runId, phase: "accepted", run: servedView(accepted, frame.supervised) } as TDetails, warnings, note);
  }
  frame.onUpdate?.({ content: [{ type: "text", text: `${frame.label} ${runId} started.` }], details: { runId, phase: "running" } as TDetails });
  const settled = await launched.settled;
  const { view, warnings } = settled;
  const details = { runId: view.runId, phase: "settled", run: servedView(view, frame.supervised), ...frame.settledDetails?.(settled) } as TDetails;
  return settledReceipt(frame.tool, view, frame.supervised, warnings, frame.settledText(settled), details);
}
