/**
 * A workflow's children as a tree: one line each with status, description, elapsed and spend,
 * and beneath a running or finished child what it is doing now or the last line it wrote.
 */
import type { Theme } from "@earendil-works/pi-coding-agent";
import type { ChildEntry } from "../contract/child-entry.ts";
import { addUsage, type UsageTotals } from "../harnesses/index.ts";
import { elapsedSince, formatDuration, formatSpend, oneLine, statusMark } from "./format.ts";

/** Summed usage of the children so far, while the workflow itself has not reported any. */
export function childrenSpend(children: readonly ChildEntry[] | undefined): UsageTotals | undefined {
  if (!children || children.length === 0) return undefined;
  const total: UsageTotals = {};
  for (const child of children) addUsage(total, child.usage);
  return total;
}

/** "2/5 done" style counts for a header. */
export function childCounts(children: readonly ChildEntry[]): { done: number; total: number; failed: number } {
  const done = children.filter((child) => child.status !== "running").length;
  const failed = children.filter((child) => child.status !== "running" && child.status !== "succeeded").length;
  return { done, total: children.length, failed };
}

const textOf = (value: unknown): string => (typeof value === "string" ? value : "");

/** How many children the tree draws; a workflow may launch thousands, and each row redraws with every update. */
export const TREE_CHILDREN = 20;

/**
 * The children worth a line when there are more than `max`: every running one first (what is
 * happening), then those that did not succeed (what went wrong), then the newest; in launch order.
 * Shared with `flow run`'s live view, whose entries carry the status one level down.
 */
export function childrenWorthShowing<T>(children: readonly T[], max: number, statusOf: (child: T) => ChildEntry["status"]): T[] {
  if (children.length <= max) return [...children];
  const picked = new Set<T>();
  const take = (child: T) => picked.size < max && picked.add(child);
  for (const child of children) if (statusOf(child) === "running") take(child);
  for (const child of children) if (statusOf(child) !== "running" && statusOf(child) !== "succeeded") take(child);
  for (let index = children.length - 1; index >= 0 && picked.size < max; index--) take(children[index]!);
  return children.filter((child) => picked.has(child));
}

export function workflowTree(children: readonly ChildEntry[], theme: Theme, now = Date.now(), max = TREE_CHILDREN): string[] {
  const lines: string[] = [];
  const shown = childrenWorthShowing(children, max, (child) => child.status);
  const hidden = children.length - shown.length;
  shown.forEach((child, position) => {
    const last = position === shown.length - 1 && hidden === 0;
    const [mark, color] = statusMark(child.status);
    const elapsed = formatDuration(elapsedSince(child.startedAt, child.endedAt, now));
    const tail = [elapsed, formatSpend(child.usage)].filter(Boolean).join(" ");
    lines.push(`${theme.fg("dim", last ? "└─" : "├─")} ${theme.fg(color, mark)} ${oneLine(child.description)}${tail ? ` ${theme.fg("dim", tail)}` : ""}`);
    const indent = theme.fg("dim", last ? "   " : "│  ");
    // Children read back from a session file may carry anything here: only text is drawn.
    const activity = textOf(child.activity);
    const lastOutput = textOf(child.lastOutput);
    const now_ = child.status === "running" && activity ? theme.fg("accent", oneLine(activity)) : "";
    const said = lastOutput ? theme.fg("muted", `“${oneLine(lastOutput)}”`) : "";
    const detail = [now_, said].filter(Boolean).join(" ");
    if (detail) lines.push(`${indent}  ${detail}`);
  });
  if (hidden > 0) {
    const counts = childCounts(children);
    const summary = `${counts.total - counts.done} running, ${counts.done - counts.failed} succeeded, ${counts.failed} failed in all`;
    lines.push(`${theme.fg("dim", "└─")} ${theme.fg("muted", `… ${hidden} more children not shown (${summary})`)}`);
  }
  return lines;
}
