import { FlowError } from "../contract/errors.ts";
import type { RunView } from "../contract/run-schema.ts";
import type { RunStore, WorkflowCall } from "../runs/index.ts";
import { anchor, escapedBytes, html } from "./escape.ts";

/**
 * A workflow's calls in the report: every agent() and tools.* call, read from the run's `calls`
 * view (the one external_runs serves), with the runs they started linked to their sections.
 */
export interface ReportCalls {
  list: WorkflowCall[];
  /** The view held more than the report carries: `flow runs show --view calls` has the rest. */
  cut: boolean;
}

/** The most of the calls view a report carries per workflow: thousands of calls. */
export const REPORT_CALLS_BYTES = 1024 * 1024;

/** The whole calls of a page; a page cut short keeps its whole entries (each starts with `{"kind":`). */
function parseCalls(text: string, cut: boolean): WorkflowCall[] {
  const whole = cut ? `${text.slice(0, Math.max(1, text.lastIndexOf(',{"kind":')))}]` : text;
  try {
    const parsed = JSON.parse(whole) as unknown;
    return Array.isArray(parsed) ? (parsed as WorkflowCall[]) : [];
  } catch {
    return [];
  }
}

/** The calls of a workflow, at most `limitBytes` of its calls view, and how many bytes of the page they take, escaped (its JSON's own quotes counted too). */
export function readCalls(store: RunStore, runId: string, limitBytes: number): ReportCalls & { bytes: number } {
  let page: { text: string; nextCursor?: string };
  try {
    ({ page } = store.inspectSingle(runId, "calls", { limitBytes }));
  } catch (error) {
    // A journal too large to fold still gets its report: the calls table says it was cut.
    if (error instanceof FlowError && error.code === "run_unavailable") return { list: [], cut: true, bytes: 0 };
    throw error;
  }
  const cut = page.nextCursor !== undefined;
  return { list: page.text.trim() === "" ? [] : parseCalls(page.text, cut), cut, bytes: escapedBytes(page.text) };
}

/** A link to a run in this report, or its ID as text when the report does not hold it. */
export function runLink(runId: string, inReport: ReadonlySet<string>): string {
  return inReport.has(runId) ? `<a href="#${anchor(runId)}">${html(runId)}</a>` : `<code>${html(runId)}</code>`;
}

function callName(call: WorkflowCall): string {
  if (call.kind === "agent") return `agent(${html(call.target)})`;
  return `tools.${html(call.target)}${call.action ? ` <span class="who">${html(call.action)}</span>` : ""}`;
}

/** What a row says of its outcome: the started run's state when the report holds it (it is the newer), else the journal's. */
function callState(call: WorkflowCall, runs: ReadonlyMap<string, RunView>): string {
  const run = call.runId === undefined ? undefined : runs.get(call.runId);
  return run ? (run.state.outcome ?? run.state.status) : call.status;
}

function notes(call: WorkflowCall): string {
  const items = [call.replayed ? "answered from the resumed run" : "", call.delivered === false ? "the workflow had stopped: the script never saw it" : ""].filter(Boolean);
  return items.length === 0 ? "" : ` <span class="note">(${items.map(html).join("; ")})</span>`;
}

export function callsTable(calls: ReportCalls, runs: ReadonlyMap<string, RunView>): string {
  const more = calls.cut ? `<p class="note">More calls than the report carries: <code>flow runs show --view calls</code> pages them all.</p>` : "";
  if (calls.list.length === 0) return more === "" ? "" : `<h4>Calls</h4>${more}`;
  const inReport = new Set(runs.keys());
  const rows = calls.list.map((call) => {
    const state = callState(call, runs);
    const description = call.description ?? (call.runId ? runs.get(call.runId)?.task.description : undefined) ?? "";
    const error = call.error ? `<div class="error">${html(call.error.code)}: ${html(call.error.message)}</div>` : "";
    return `<tr class="call ${html(call.kind)}"><td>${call.index}</td><td>${callName(call)}</td><td>${html(description)}${notes(call)}${error}</td><td>${call.runId ? runLink(call.runId, inReport) : "–"}</td><td><span class="badge ${html(state)}">${html(state)}</span></td></tr>`;
  });
  return `<h4>Calls</h4><table class="calls"><tr><th>#</th><th>call</th><th>description</th><th>run</th><th>outcome</th></tr>${rows.join("")}</table>${more}`;
}
