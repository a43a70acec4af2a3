import type { RunView } from "../../contract/run-schema.ts";
import { INLINE_LIMIT_BYTES, jsonBytes } from "./delivery.ts";
import { readFinalValue } from "../journal/evidence.ts";
import type { RunFacts } from "./facts.ts";

/**
 * Facts -> the public RunView. Only task identity, state, timing, integrity, output delivery, refs,
 * children and usage leave this function: no paths, no launch or configuration details.
 */
const ref = <V extends "summary" | "final" | "diagnostics">(runId: string, view: V) => ({
  action: "inspect" as const,
  runIds: [runId],
  view,
});

type Output = RunView["output"];

/**
 * What a set of views may still spend on inline values, in UTF-8 bytes of their JSON: a list page
 * of 500 runs would otherwise carry 500 values of up to 16 KiB each. A value that does not fit what
 * is left is delivered by reference, as `wait` does; nothing is read for it.
 */
export interface InlineBudget {
  left: number;
}

/** Inline when the value fits both the contract's 16 KiB and what `budget` has left, which it spends. */
function fitsInline(bytes: number, budget: InlineBudget | undefined): boolean {
  if (bytes > INLINE_LIMIT_BYTES || (budget !== undefined && bytes > budget.left)) return false;
  if (budget !== undefined) budget.left -= bytes;
  return true;
}

function outputOf(facts: RunFacts, budget: InlineBudget | undefined): Output {
  const source = facts.final;
  if (!source) return { finalAvailable: false, delivery: "none" };
  if (source.where === "value") {
    const bytes = jsonBytes(source.final.value) ?? 0;
    const out: Output = fitsInline(bytes, budget)
      ? { finalAvailable: true, delivery: "inline", value: source.final.value }
      : { finalAvailable: true, delivery: "reference" };
    if (source.final.redacted) out.redacted = true;
    return out;
  }
  const out: Output = { finalAvailable: true, delivery: "reference" };
  if (source.meta.valueJsonBytes <= INLINE_LIMIT_BYTES && (budget === undefined || source.meta.valueJsonBytes <= budget.left)) {
    const read = readFinalValue(source.path, source.meta.format);
    if (read.ok && fitsInline(source.meta.valueJsonBytes, budget)) {
      out.delivery = "inline";
      out.value = read.value;
    }
  }
  if (source.meta.redacted) out.redacted = true;
  return out;
}

export function buildView(facts: RunFacts, budget?: InlineBudget): RunView {
  const output = outputOf(facts, budget);
  // Stored with the task, shown beside the run ID; a run recorded before it existed starts its own line.
  const { correlationId, ...task } = facts.task;
  const view: RunView = {
    runId: facts.runId,
    correlationId: correlationId ?? facts.runId,
    kind: facts.kind,
    task,
    live: facts.live,
    background: facts.background,
    state: { status: facts.status, outcome: facts.outcome },
    timing: { startedAt: facts.startedAt },
    integrity: facts.integrity,
    output,
    refs: { summary: ref(facts.runId, "summary") },
  };
  if (facts.error) view.state.error = { code: facts.error.code, message: facts.error.message };
  if (facts.endedAt) {
    view.timing.endedAt = facts.endedAt;
    const ms = Date.parse(facts.endedAt) - Date.parse(facts.startedAt);
    if (Number.isFinite(ms)) view.timing.durationMs = Math.max(0, ms);
  }
  if (output.finalAvailable) view.refs.final = ref(facts.runId, "final");
  if (facts.diagnosticsBytes > 0) view.refs.diagnostics = ref(facts.runId, "diagnostics");
  if (facts.kind === "workflow") {
    const { count, failed, replayed, live } = facts.children ?? { count: 0 };
    view.children = { count };
    if (failed !== undefined) view.children.failed = failed;
    if (replayed !== undefined && live !== undefined) Object.assign(view.children, { replayed, live });
  }
  if (facts.usage && Object.keys(facts.usage).length > 0) view.usage = { ...facts.usage };
  if (facts.changes) view.changes = { ...facts.changes };
  return view;
}

function describeTask(view: RunView): string {
  const t = view.task;
  const parts = [
    t.role && `role=${t.role}`,
    t.subagentType && `subagent_type=${t.subagentType}`,
    t.harness && `harness=${t.harness}`,
    t.workflow && `workflow=${t.workflow}`,
    t.source && `source=${t.source}`,
    t.parentRunId && `parent=${t.parentRunId}`,
  ].filter((part): part is string => typeof part === "string" && part.length > 0);
  return parts.length > 0 ? ` [${parts.join(" ")}]` : "";
}

/**
 * The plain-text form of a run for the model-facing `content` channel. It carries the same facts as
 * the view, including an inline value in full (the value was already bounded by the 16 KiB rule).
 */
/** What a text says where it would send the model to external_runs, in a session that tool cannot serve. */
export const NOT_SUPERVISED = "This session is not persisted, so external_runs cannot supervise it";

/** A run as text, for a session external_runs can serve. */
export function formatRunText(view: RunView): string {
  return formatRunTextFor(view, true);
}

/**
 * How much of a run's error message a list row's text shows. A message is up to 8 KiB and a list
 * page up to 500 rows a stream: whole, they would put megabytes into the model's context. The
 * envelope keeps each message whole, and the row says where to read it.
 */
const LIST_ERROR_CHARS = 500;

/** A run as a list row's text: its error message cut at LIST_ERROR_CHARS. */
export function formatListRowText(view: RunView): string {
  return formatRunTextFor(view, true, LIST_ERROR_CHARS);
}

/** The error's message, cut after `maxChars` (never inside a surrogate pair) with how many were left out and where they are. */
function errorMessageText(view: RunView, message: string, maxChars: number): string {
  if (message.length <= maxChars) return message;
  const end = /[\uD800-\uDBFF]/.test(message[maxChars - 1] ?? "") ? maxChars - 1 : maxChars;
  const inspect = JSON.stringify({ action: "inspect", runIds: [view.runId] });
  return `${message.slice(0, end)}… [${message.length - end} more characters: external_runs ${inspect}]`;
}

/**
 * A run as text; `supervised` false (a session that is not persisted) never points to external_runs.
 * `errorChars` cuts the error message, where a supervised session can read it whole.
 */
export function formatRunTextFor(view: RunView, supervised: boolean, errorChars = Number.POSITIVE_INFINITY): string {
  const lines: string[] = [];
  lines.push(
    `${view.runId} (${view.kind}${view.background ? ", background" : ""}) ${JSON.stringify(view.task.description)}${describeTask(view)}`,
  );
  const outcome = view.state.outcome ? ` ${view.state.outcome}` : "";
  if (view.correlationId !== undefined && view.correlationId !== view.runId) lines.push(`  correlationId: ${view.correlationId}`);
  lines.push(`  status: ${view.state.status}${outcome}; live: ${view.live ? "yes" : "no"}; integrity: ${view.integrity}`);
  if (view.state.error) {
    const message = supervised ? errorMessageText(view, view.state.error.message, errorChars) : view.state.error.message;
    lines.push(`  error: ${view.state.error.code}: ${message}`);
  }
  const ended = view.timing.endedAt ? `, ended ${view.timing.endedAt} (${view.timing.durationMs ?? "?"} ms)` : "";
  lines.push(`  started ${view.timing.startedAt}${ended}`);
  if (view.children) {
    const failed = view.children.failed === undefined ? "" : `, ${view.children.failed} failed`;
    lines.push(`  children: ${view.children.count}${failed}`);
    const { replayed, live } = view.children;
    if (replayed !== undefined) lines.push(`  resumed from ${view.task.resumedFrom ?? "?"}: ${replayed} calls replayed from its journal, ${live ?? 0} ran live`);
  }
  if (view.output.delivery === "inline") {
    const value = typeof view.output.value === "string" ? view.output.value : JSON.stringify(view.output.value);
    lines.push(`  result${view.output.redacted ? " (redacted)" : ""}: ${value}`);
  } else if (view.output.delivery === "reference") {
    lines.push(
      supervised
        ? `  result: by reference; page it with external_runs inspect runIds ["${view.runId}"] view "final"`
        : `  result: too large to inline (over 16 KiB). ${NOT_SUPERVISED}: a person reads it with /flow report ${view.runId}; ask for a shorter answer if you need it here`,
    );
  } else {
    lines.push("  result: none");
  }
  return lines.join("\n");
}

/** Receipt warnings of any set of views: `output_redacted` when redaction changed an inlined value. */
export function outputWarnings(views: readonly RunView[]): string[] {
  return views.some((view) => view.output.delivery === "inline" && view.output.redacted) ? ["output_redacted"] : [];
}
