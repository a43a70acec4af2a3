import { usageAmount, type RunView } from "../contract/run-schema.ts";
import { REPORT_TOTAL_BYTES, type BoundedText, type ReportData, type ReportRun } from "./collect.ts";
import { callsTable, runLink } from "./calls.ts";
import { anchor, html, textOf } from "./escape.ts";
import { formatCost, formatDuration, stateOf, totalsOf } from "./totals.ts";

/** An answer longer than this is folded: its first lines show, the rest behind a click. */
const FOLD_CHARS = 600;

/** The most of an error message a run's row shows: the row is one line; the run's section has the rest. */
const ROW_ERROR_CHARS = 200;

const rowError = (message: unknown): string => {
  const text = textOf(message);
  return text.length <= ROW_ERROR_CHARS ? text : `${text.slice(0, ROW_ERROR_CHARS)}…`;
};

const who = (view: RunView): string =>
  view.kind === "workflow" ? `workflow ${view.task.workflow ?? "inline"}` : (view.task.role ?? view.task.subagentType ?? "agent");

const tokens = (view: RunView): string => {
  const usage = view.usage;
  if (!usage || (usage.inputTokens === undefined && usage.outputTokens === undefined)) return "–";
  return `${usageAmount(usage.inputTokens)} in / ${usageAmount(usage.outputTokens)} out`;
};

export function summarySection(data: ReportData): string {
  const root = data.runs[0]!.view;
  const totals = totalsOf(data.runs);
  const outcomes = Object.entries(totals.outcomes)
    .map(([state, count]) => `<span class="badge ${html(state)}">${html(state)}: ${count}</span>`)
    .join(" ");
  const progress = root.state.status === "done" ? "" : `<p class="note">This run is ${html(root.state.status)}: the report shows what is known at ${html(data.generatedAt)}.</p>`;
  const cut = data.cut ? `<p class="note">The runs' answers, errors, logs, calls and diagnostics reached the report's limit (${REPORT_TOTAL_BYTES / 1024 / 1024} MiB): later runs show none. <code>flow runs show</code> has them.</p>` : "";
  return `<header>
<h1>${html(root.task.description)}</h1>
<p><code>${html(root.runId)}</code> · ${html(who(root))} · <span class="badge ${html(stateOf(root))}">${html(stateOf(root))}</span> · started ${html(root.timing.startedAt)} · ${html(formatDuration(root.timing.durationMs))}</p>
${progress}${cut}
<table class="totals"><tr><th>agents</th><th>workflows</th><th>outcomes</th><th>turns</th><th>tool calls</th><th>tokens</th><th>cost</th></tr>
<tr><td>${totals.agents}</td><td>${totals.workflows}</td><td>${outcomes}</td><td>${totals.turns}</td><td>${totals.toolCalls}</td><td>${totals.inputTokens} in / ${totals.outputTokens} out</td><td class="cost">${html(formatCost(totals.costUsd))}</td></tr></table>
</header>`;
}

/** The narrowest bar, in percent of the timeline: a run of a millisecond still shows. */
const MIN_BAR_PERCENT = 0.4;

/**
 * Where a run's bar sits on the timeline, in percent of it: from its start to its end, at least
 * MIN_BAR_PERCENT wide, and always inside the timeline. A run too short for its own width that
 * ends at (or within that width of) the timeline's end is drawn ending there, not past it; an end
 * before its start (clocks read a millisecond apart) is drawn as the narrowest bar at the start.
 */
export function barOf(start: number, end: number, origin: number, span: number): { left: number; width: number } {
  const width = Math.min(100, Math.max(MIN_BAR_PERCENT, ((end - start) / span) * 100));
  const left = Math.min(Math.max(0, ((start - origin) / span) * 100), 100 - width);
  return { left, width };
}

/** A time of a record as milliseconds, or undefined when it is no time (a record is a file anyone may have written). */
const timeOf = (text: string | undefined): number | undefined => {
  const ms = Date.parse(String(text));
  return Number.isFinite(ms) ? ms : undefined;
};

/** The tree of runs with a timeline bar each: one row a run, so 200 children stay one screenful of rows each 18px high. */
export function treeSection(data: ReportData): string {
  const starts = data.runs.map(({ view }) => timeOf(view.timing.startedAt));
  // A run with no readable end is drawn to the report's time, as one still going.
  const ends = data.runs.map(({ view }, index) => timeOf(view.timing.endedAt) ?? timeOf(data.generatedAt) ?? starts[index]);
  // Only readable times place the timeline: one unreadable start would make every bar NaN, drawn as none.
  const known = (times: (number | undefined)[]) => times.filter((time): time is number => time !== undefined);
  const origin = Math.min(...known(starts));
  const span = Math.max(1, Math.max(...known(ends)) - origin);
  const rows = data.runs.map(({ view, depth }, index) => {
    const start = starts[index];
    const bar = start === undefined ? undefined : barOf(start, ends[index] ?? start, origin, span);
    const state = stateOf(view);
    const error = view.state.error ? `<div class="error">${html(view.state.error.code)}: ${html(rowError(view.state.error.message))}</div>` : "";
    return `<tr class="run ${html(state)}" data-run="${html(view.runId)}">
<td class="name" style="padding-left:${0.4 + depth * 1.2}em"><a href="#${anchor(view.runId)}">${html(view.task.description)}</a> <span class="who">${html(who(view))}</span>${error}</td>
<td class="bar">${bar ? `<span class="span ${html(state)}" style="left:${bar.left.toFixed(3)}%;width:${bar.width.toFixed(3)}%" title="${html(formatDuration(view.timing.durationMs))}"></span>` : `<span class="note">start unknown</span>`}</td>
<td class="outcome"><span class="badge ${html(state)}">${html(state)}</span></td>
<td class="duration">${html(formatDuration(view.timing.durationMs))}</td>
<td class="tokens">${html(tokens(view))}</td>
<td class="cost">${html(formatCost(view.usage?.costUsd))}</td>
</tr>`;
  });
  return `<section><h2>Runs</h2>
<table class="tree"><thead><tr><th>run</th><th>timeline (${html(formatDuration(span))})</th><th>outcome</th><th>time</th><th>tokens</th><th>cost</th></tr></thead>
<tbody>${rows.join("\n")}</tbody></table></section>`;
}

function foldedText(text: BoundedText, label: string): string {
  const more = text.cut ? `<p class="note">Cut at the report's limit: <code>flow runs show</code> pages the rest.</p>` : "";
  if (text.text.length <= FOLD_CHARS) return `<pre>${html(text.text)}</pre>${more}`;
  return `<details class="fold"><summary>${html(label)}: ${text.text.length} characters<pre>${html(text.text.slice(0, FOLD_CHARS))}…</pre></summary><pre>${html(text.text)}</pre></details>${more}`;
}

function links(run: ReportRun, inReport: ReadonlySet<string>): string {
  const { view } = run;
  const items: string[] = [];
  if (view.task.parentRunId) items.push(`started by ${runLink(view.task.parentRunId, inReport)}`);
  if (view.task.resumedFrom) items.push(`resumes ${runLink(view.task.resumedFrom, inReport)}`);
  if (run.resumes) items.push(`continues the conversation of ${runLink(run.resumes, inReport)}`);
  const steers = run.diagnostics.filter((line) => line.code === "steer").length;
  if (steers > 0) items.push(`steered ${steers} time${steers === 1 ? "" : "s"}`);
  return items.length === 0 ? "" : `<p class="links">${items.join(" · ")}</p>`;
}

function runDetail(run: ReportRun, runs: ReadonlyMap<string, RunView>, inReport: ReadonlySet<string>): string {
  const { view } = run;
  const state = stateOf(view);
  const usage = view.usage ?? {};
  const facts = [
    view.task.harness ? `harness ${html(view.task.harness)}` : "",
    run.model ? `model ${html(run.model)}` : "",
    `${usageAmount(usage.turns)} turns`,
    `${usageAmount(usage.toolCalls)} tool calls`,
    html(tokens(view)),
    `cost ${html(formatCost(usage.costUsd))}`,
    `integrity ${html(view.integrity)}`,
  ].filter((fact) => fact !== "");
  const message = run.error?.cut ? `<span class="note">(left out at the report's limit: <code>flow runs show</code> has it)</span>` : html(run.error?.text ?? view.state.error?.message);
  const error = view.state.error ? `<p class="error">${html(view.state.error.code)}: ${message}</p>` : "";
  const diagnostics = run.diagnostics.filter((line) => line.level === "error" || line.level === "warn");
  const items = diagnostics.map((line) => `<li class="${html(line.level)}">${html(line.level)}${line.code ? ` [${html(line.code)}]` : ""}: ${html(line.message)}</li>`).join("");
  const moreDiagnostics = run.diagnosticsCut ? `<p class="note">More diagnostics than the report carries: <code>flow runs show ${html(view.runId)} --view diagnostics</code> pages them all.</p>` : "";
  const diagnosticList = diagnostics.length === 0 && moreDiagnostics === "" ? "" : `<h4>Diagnostics</h4>${moreDiagnostics}${items === "" ? "" : `<ul class="diagnostics">${items}</ul>`}`;
  const redacted = view.output.redacted ? ` <span class="note">(redacted)</span>` : "";
  const final = run.final ? `<h4>${view.kind === "workflow" ? "Final value" : "Answer"}${redacted}</h4>${foldedText(run.final, "answer")}` : "";
  const log = run.log ? `<h4>Log</h4>${foldedText(run.log, "log")}` : "";
  return `<article id="${anchor(view.runId)}" class="detail ${html(state)}">
<h3>${html(view.task.description)} <span class="badge ${html(state)}">${html(state)}</span></h3>
<p><code>${html(view.runId)}</code> · ${html(who(view))} · ${facts.join(" · ")} · ${html(formatDuration(view.timing.durationMs))}</p>
${links(run, inReport)}${error}${run.calls ? callsTable(run.calls, runs) : ""}${final}${log}${diagnosticList}
</article>`;
}

export function detailSection(data: ReportData): string {
  const runs = new Map(data.runs.map(({ view }) => [view.runId, view]));
  const inReport = new Set(runs.keys());
  return `<section><h2>Each run</h2>${data.runs.map((run) => runDetail(run, runs, inReport)).join("\n")}</section>`;
}
