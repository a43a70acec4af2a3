import type { RunView } from "../contract/run-schema.ts";
import { jsonDepth } from "../../runtime/json.ts";
import { MAX_PAGE_BYTES, type RunStore } from "../runs/index.ts";
import { readCalls, REPORT_CALLS_BYTES, type ReportCalls } from "./calls.ts";
import { escapedBytes, escapedPrefix, textOf } from "./escape.ts";

/**
 * What a run report shows, read only through the run store's views (the ones external_runs serves):
 * the run, every run it started (workflows nest), and per run its final value, diagnostics, the
 * script's log and calls, and the launch facts that link runs (model, resume). Each text is bounded: a report
 * of a fan-out stays a file a browser opens, and the full text is one `flow runs show` away.
 */
export interface ReportRun {
  view: RunView;
  /** 0 for the run reported on, 1 for its children, and so on. */
  depth: number;
  final?: BoundedText;
  /** The message of the run's error, when it has one (its code is in the view). */
  error?: BoundedText;
  diagnostics: DiagnosticLine[];
  /** The run's diagnostics are longer than the page read: a warning or error may follow the cut. */
  diagnosticsCut?: true;
  /** A workflow's log() messages. */
  log?: BoundedText;
  /** A workflow's agent() and tools.* calls, from its calls view. */
  calls?: ReportCalls;
  model?: string;
  /** The agent run whose conversation this one continues. */
  resumes?: string;
}

export interface BoundedText {
  text: string;
  /** More follows in the run's evidence than the report carries. */
  cut: boolean;
}

export interface DiagnosticLine {
  level: string;
  code?: string;
  message: string;
}

export interface ReportData {
  runs: ReportRun[];
  generatedAt: string;
  /** The runs' texts reached REPORT_TOTAL_BYTES: later runs' are left out. */
  cut?: boolean;
}

/** The most of one view's text a report carries per run. */
export const REPORT_TEXT_BYTES = 64 * 1024;

/**
 * The most of the reported run's own answer a report carries: a page's most. A receipt whose answer
 * is over 16 KiB tells a person in a session not saved to a file that `/flow report` shows it.
 */
const REPORTED_ANSWER_BYTES = MAX_PAGE_BYTES;

/**
 * The most of the runs' texts (answers, error messages, logs, calls, diagnostics) one report
 * carries. 64 KiB a text is not bound enough alone: a workflow may start 4,096 children, whose
 * answers (or 8 KiB error messages, or workflows' 1 MiB calls tables) would make a page no browser
 * opens, or none at all (escaped, past the longest string Node builds).
 */
export const REPORT_TOTAL_BYTES = 8 * 1024 * 1024;

/** What is left of REPORT_TOTAL_BYTES as the runs are read. */
interface Budget {
  left: number;
  /** A text was left out for want of it. */
  spent?: boolean;
}

/** The first page of a view; with a budget, none once it is spent (shown as cut), and what it takes is charged to it. */
function firstPage(store: RunStore, runId: string, view: string, budget?: Budget, limitBytes = REPORT_TEXT_BYTES): BoundedText & { encoding: string } {
  if (budget && budget.left <= 0) {
    budget.spent = true;
    return { text: "", cut: true, encoding: "text" };
  }
  const payload = store.inspectSingle(runId, view, { limitBytes });
  if (budget) budget.left -= escapedBytes(payload.page.text);
  return { text: payload.page.text, cut: payload.page.nextCursor !== undefined, encoding: payload.page.encoding };
}

const DIAGNOSTIC_LINE = /^(?:\S+ )?(debug|info|warn|error)(?: \[([^\]]+)\])?: (.*)$/;

/** A text the run's view holds already (its error message), charged to the budget as a page is: none once it is spent. */
function charged(text: string, budget: Budget): BoundedText {
  if (budget.left <= 0) {
    budget.spent = true;
    return { text: "", cut: true };
  }
  budget.left -= escapedBytes(text);
  return { text, cut: false };
}

/**
 * A run's final value as the page shows it, charged as shown: indented for reading, a value may be
 * four times its text, so charging the text as given let a fan-out of JSON answers make a page
 * several times the total.
 */
function finalText(store: RunStore, view: RunView, budget: Budget, limitBytes: number): BoundedText {
  if (budget.left <= 0) {
    budget.spent = true;
    return { text: "", cut: true };
  }
  const page = firstPage(store, view.runId, "final", undefined, limitBytes);
  const shown = page.cut ? page.text : readable(page.text, view.kind);
  // The reported run's answer may be a page of 4 MiB, 24 MiB escaped: it stops where the total does.
  const whole = escapedBytes(shown) <= budget.left;
  const text = whole ? shown : escapedPrefix(shown, budget.left);
  if (!whole) budget.spent = true;
  budget.left -= escapedBytes(text);
  return { text, cut: page.cut || !whole };
}

/** A workflow's calls, as much of them as the budget has left (at most REPORT_CALLS_BYTES), charged to it. */
function chargedCalls(store: RunStore, runId: string, budget: Budget): ReportCalls {
  if (budget.left <= 0) {
    budget.spent = true;
    return { list: [], cut: true };
  }
  const { bytes, ...calls } = readCalls(store, runId, Math.min(REPORT_CALLS_BYTES, budget.left));
  budget.left -= bytes;
  return calls;
}

/**
 * The entries of a workflow's log or diagnostics page: a JSON array written one entry a line (`[`,
 * `{…},`, …, `]`), so a page cut inside it (a log longer than a page) still holds whole entries
 * on every line but its last.
 */
function pageEntries(text: string): Record<string, unknown>[] {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (Array.isArray(parsed)) return parsed.filter(isEntry);
  } catch {
    // Cut: read line by line below.
  }
  const entries: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const entry = JSON.parse(line.endsWith(",") ? line.slice(0, -1) : line) as unknown;
      if (isEntry(entry)) entries.push(entry);
    } catch {
      // The entry the page's cut ends in.
    }
  }
  return entries;
}

const isEntry = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/** A diagnostics page as lines: workflows keep a JSON array of entries, agents a text log. */
export function parseDiagnostics(text: string, encoding: string): DiagnosticLine[] {
  if (text.trim() === "") return [];
  if (encoding === "json") {
    return pageEntries(text).map((entry) => ({
      level: textOf(entry.level ?? "info"),
      ...(typeof entry.code === "string" ? { code: entry.code } : {}),
      message: textOf(entry.message),
    }));
  }
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const match = DIAGNOSTIC_LINE.exec(line);
      return match ? { level: match[1]!, ...(match[2] ? { code: match[2] } : {}), message: match[3]! } : { level: "info", message: line };
    });
}

/** A workflow's log view (a JSON array of messages) as text, one message a line. */
function logText(page: BoundedText & { encoding: string }): BoundedText | undefined {
  const messages = pageEntries(page.text);
  if (messages.length > 0) return { text: messages.map((message) => textOf(message.text)).join("\n"), cut: page.cut };
  // One message longer than the page: no whole entry, so what the page holds of it, as given.
  return page.cut && page.text !== "" ? { text: page.text, cut: true } : undefined;
}

/**
 * A launch's fields, or those before its prompt when the page is cut: an agent's launch holds its
 * prompt last (a handoff packet may be far longer than a page), so its model and the run it resumes
 * are whole before it. `,"prompt":` there is the key: inside a string its quote would be escaped.
 */
function launchFields(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const prompt = text.indexOf(',"prompt":');
    try {
      return prompt < 0 ? undefined : JSON.parse(`${text.slice(0, prompt)}}`);
    } catch {
      return undefined;
    }
  }
}

function launchFacts(store: RunStore, runId: string): { model?: string; resumes?: string } {
  const launch = launchFields(firstPage(store, runId, "launch").text);
  if (launch === null || typeof launch !== "object") return {};
  const { model, resume } = launch as { model?: unknown; resume?: unknown };
  return { ...(typeof model === "string" ? { model } : {}), ...(typeof resume === "string" ? { resumes: resume } : {}) };
}

function reportRun(store: RunStore, found: RunView, depth: number, budget: Budget): ReportRun {
  // As `flow runs` says it: an unfinished run that another live process owns is running.
  const view = found.state.status === "interrupted_or_uncertain" && store.ownedElsewhere(found.runId) ? { ...found, state: { ...found.state, status: "running" as const } } : found;
  const diagnostics = firstPage(store, view.runId, "diagnostics", budget);
  const run: ReportRun = { view, depth, diagnostics: parseDiagnostics(diagnostics.text, diagnostics.encoding), ...launchFacts(store, view.runId) };
  // Cut by its length, not left out by the report's total (the header says that).
  if (diagnostics.cut && diagnostics.text !== "") run.diagnosticsCut = true;
  if (view.state.error) run.error = charged(textOf(view.state.error.message), budget);
  if (view.output.finalAvailable) run.final = finalText(store, view, budget, depth === 0 ? REPORTED_ANSWER_BYTES : REPORT_TEXT_BYTES);
  if (view.kind === "workflow") {
    const log = logText(firstPage(store, view.runId, "output", budget));
    if (log) run.log = log;
    run.calls = chargedCalls(store, view.runId, budget);
  }
  return run;
}

/**
 * The deepest value indented for reading. Indentation grows with the square of the depth: an answer
 * of 5,000 nested brackets (10 KB) would be 50 MB indented, in the page once per run that gave it.
 */
const READABLE_DEPTH = 32;
/** How many times its text a value may grow when indented (an ordinary object grows about twofold). */
const READABLE_GROWTH = 4;

/** A final value as a person reads it: a workflow's `{"result": …}` unwrapped, JSON indented unless it nests too deep to. */
function readable(text: string, kind: RunView["kind"]): string {
  try {
    const parsed = JSON.parse(text) as unknown;
    const value = kind === "workflow" && parsed !== null && typeof parsed === "object" && "result" in parsed ? (parsed as { result: unknown }).result : parsed;
    if (typeof value === "string") return value;
    if (jsonDepth(text, READABLE_DEPTH) > READABLE_DEPTH) return text;
    // Even shallow, a long list of tiny values indented at depth 32 is 30 times its text: a few times at most.
    const indented = JSON.stringify(value, null, 2);
    return indented.length <= READABLE_GROWTH * text.length ? indented : text;
  } catch {
    return text; // an agent's plain-text answer
  }
}

const byStart = (a: RunView, b: RunView): number => a.timing.startedAt.localeCompare(b.timing.startedAt) || a.runId.localeCompare(b.runId);

/**
 * The run and its descendants, depth first in start order: the order of the report's tree. A run
 * still in progress reports what is known so far.
 */
export function collectReport(store: RunStore, runId: string, now: Date = new Date()): ReportData {
  const root = store.view(runId);
  const children = new Map<string, RunView[]>();
  for (const view of store.listEvery()) {
    const parent = view.task.parentRunId;
    if (parent === undefined) continue;
    const siblings = children.get(parent) ?? [];
    siblings.push(view);
    children.set(parent, siblings);
  }
  const runs: ReportRun[] = [];
  // Parent links are read from records, which a forger can make circular (a run its own parent) or
  // as deep as it likes: each run is visited once, from a stack of its own rather than the call stack.
  const seen = new Set<string>();
  const budget: Budget = { left: REPORT_TOTAL_BYTES };
  const pending: { view: RunView; depth: number }[] = [{ view: root, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { view, depth } = next;
    if (seen.has(view.runId)) continue;
    seen.add(view.runId);
    runs.push(reportRun(store, view, depth, budget));
    const started = (children.get(view.runId) ?? []).sort(byStart);
    for (let index = started.length - 1; index >= 0; index--) pending.push({ view: started[index]!, depth: depth + 1 });
  }
  return { runs, generatedAt: now.toISOString(), ...(budget.spent ? { cut: true } : {}) };
}
