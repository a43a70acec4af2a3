/**
 * Plain formatting shared by every pi-flow view: durations, token counts, money, and the one mark
 * each run status gets. No theme here; views color what these return.
 */
import type { ThemeColor } from "@earendil-works/pi-coding-agent";
import { stripControls } from "../runs/index.ts";
import { usageAmount, type RunView } from "../contract/run-schema.ts";

export type Usage = NonNullable<RunView["usage"]>;

/** What a run is called in a row: its workflow's name (`inline` for a script), else its role or agent type. */
export function runName(view: Pick<RunView, "kind" | "task">, unnamed = ""): string {
  if (view.kind === "workflow") return view.task.workflow ?? "inline";
  return view.task.role ?? view.task.subagentType ?? unnamed;
}

/** 850ms, 12.3s, 4m05s, 2h07m: short enough for a row, precise where it matters. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes}m${String(Math.floor((ms % 60_000) / 1000)).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/** `1 child`, `3 children`: a count with its noun in the number it needs. */
export const counted = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

/** 950, 12.3k, 4.5M. A count that is no count (a forged record's text, NaN, below zero) shows as 0. */
export function formatCount(value: number): string {
  const count = usageAmount(value);
  if (count < 1000) return String(count);
  if (count < 1_000_000) return `${(count / 1000).toFixed(count < 10_000 ? 1 : 0)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

/**
 * Cents for larger amounts, two significant digits below a cent (as Pi's own rows show cost). A cost
 * that is no amount (a forged record's text, NaN, infinite, below zero) shows as none.
 */
export function formatCost(value: number | undefined): string {
  const usd = usageAmount(value);
  if (usd <= 0) return "";
  return `$${usd >= 0.01 ? usd.toFixed(2) : usd.toPrecision(2)}`;
}

/** All tokens a run moved: fresh input, output, and cache reads and writes. */
export function totalTokens(usage: Usage | undefined): number {
  if (!usage) return 0;
  return usageAmount(usage.inputTokens) + usageAmount(usage.outputTokens) + usageAmount(usage.cacheReadTokens) + usageAmount(usage.cacheWriteTokens);
}

/** "1.2k tok $0.0042", or less when some part is unknown. */
export function formatSpend(usage: Usage | undefined): string {
  const tokens = totalTokens(usage);
  return [tokens > 0 ? `${formatCount(tokens)} tok` : "", formatCost(usage?.costUsd)].filter(Boolean).join(" ");
}

/** The full usage line of an expanded view. */
export function formatUsageDetail(usage: Usage | undefined): string {
  if (!usage) return "";
  const turns = usageAmount(usage.turns);
  const toolCalls = usageAmount(usage.toolCalls);
  const parts = [
    usage.turns !== undefined ? `${turns} turn${turns === 1 ? "" : "s"}` : "",
    toolCalls ? `${toolCalls} tool call${toolCalls === 1 ? "" : "s"}` : "",
    `${formatCount(usage.inputTokens ?? 0)} in / ${formatCount(usage.outputTokens ?? 0)} out`,
    usageAmount(usage.cacheReadTokens) || usageAmount(usage.cacheWriteTokens) ? `cache ${formatCount(usage.cacheReadTokens ?? 0)} read / ${formatCount(usage.cacheWriteTokens ?? 0)} write` : "",
    formatCost(usage.costUsd),
  ];
  return parts.filter(Boolean).join(" · ");
}

/** Where a run stands, as one word a person reads. */
export type RowStatus = "running" | "queued" | "accepted" | "succeeded" | "failed" | "cancelled" | "timed_out" | "rejected" | "uncertain";

export function statusOf(view: Pick<RunView, "state"> | undefined): RowStatus {
  if (!view) return "running";
  if (view.state.status === "done") return view.state.outcome ?? "failed";
  if (view.state.status === "interrupted_or_uncertain") return "uncertain";
  return view.state.status;
}

const MARKS: Record<RowStatus, [string, ThemeColor]> = {
  running: ["…", "warning"],
  queued: ["◌", "muted"],
  accepted: ["↗", "accent"],
  succeeded: ["✓", "success"],
  failed: ["✗", "error"],
  cancelled: ["⊘", "muted"],
  timed_out: ["⧗", "error"],
  rejected: ["✗", "error"],
  uncertain: ["?", "warning"],
};

export function statusMark(status: RowStatus): [string, ThemeColor] {
  // A status this version does not know (a record written by a newer one) reads as uncertain.
  return Object.hasOwn(MARKS, status) ? MARKS[status] : MARKS.uncertain;
}

/** Words for a status where a mark alone would be cryptic. */
export function statusWord(status: RowStatus): string {
  // A status this version does not know (a newer record's, or a forged one) is shown as text.
  return status === "timed_out" ? "timed out" : status === "accepted" ? "in background" : oneLine(String(status));
}

/** Milliseconds between two ISO times, or from one to now. */
export function elapsedSince(startedAt: string | number | undefined, endedAt?: string | number, now = Date.now()): number | undefined {
  if (startedAt === undefined) return undefined;
  const start = typeof startedAt === "number" ? startedAt : Date.parse(startedAt);
  const end = endedAt === undefined ? now : typeof endedAt === "number" ? endedAt : Date.parse(endedAt);
  return Number.isFinite(start) && Number.isFinite(end) ? Math.max(0, end - start) : undefined;
}

/** The most characters of free text one line shows: a row is a terminal's width, and a description may be a megabyte. */
export const ONE_LINE_MAX = 4096;

/**
 * One line of text, separators folded to spaces and other control characters removed: what a row may
 * show of free text, at most `max` characters (then `…`). A value read back from a session file may
 * be no text at all: a number shows as one, anything else as nothing, and a row never throws at render time.
 */
export function oneLine(value: unknown, max = ONE_LINE_MAX): string {
  const whole = typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : "";
  // Cut before the work below, with room for what it removes; an escape cut in half is still removed whole (it runs to the end).
  const text = whole.length > max * 4 ? whole.slice(0, max * 4).replace(/[\uD800-\uDBFF]$/, "") : whole;
  // Separators become spaces; escape sequences and other controls go whole (stripControls).
  const line = stripControls(text.replace(/[\t\n\v\f\r\u001c-\u001f\u0085]+/g, " ")).replace(/\s+/g, " ").trim();
  if (line.length <= max && text === whole) return line;
  return line.length <= max ? `${line}…` : `${[...line.slice(0, max)].slice(0, -1).join("").trimEnd()}…`;
}

/**
 * Text a run wrote, made safe for a terminal: line breaks and tabs stay, escape sequences (that
 * move the cursor, clear lines, set the title or write the clipboard) go whole, with every other
 * control character.
 */
export const terminalText = stripControls;
