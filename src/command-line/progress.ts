import { oneLine, childrenWorthShowing } from "../ui/index.ts";
import { createLogUpdate } from "log-update";
import { truncateToWidth, visibleWidth } from "@earendil-works/pi-tui";
import type { ChildEntry } from "../contract/child-entry.ts";

/**
 * How `flow run` shows a workflow on stderr: on a terminal, a live view redrawn in place; anywhere
 * else (a pipe, a file, CI), one plain line per event, so logs read top to bottom.
 */
export interface ProgressView {
  started(runId: string, title: string): void;
  children(entries: readonly ChildEntry[]): void;
  note(text: string): void;
  finished(line: string): void;
}

interface Tracked {
  entry: ChildEntry;
  since: number;
  until?: number;
  activity?: string;
}

const MARK: Record<ChildEntry["status"], string> = { running: "…", succeeded: "✓", failed: "✗", cancelled: "-", timed_out: "⏱" };

export function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : ms < 600_000 ? `${Math.round(ms / 1000)}s` : `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

/** Input and output tokens a child has used so far. */
const tokens = (usage: ChildEntry["usage"]): string => `${(usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0)} tokens`;

/** Child state as the view needs it: first seen, settled, last activity. */
class ChildTracker {
  readonly byIndex = new Map<number, Tracked>();

  /** Applies a snapshot; returns the plain-text events it carried. */
  apply(entries: readonly ChildEntry[], now: number): string[] {
    const events: string[] = [];
    for (const entry of entries) {
      const known = this.byIndex.get(entry.index);
      const label = `child ${entry.index + 1}`;
      if (!known) {
        this.byIndex.set(entry.index, { entry: { ...entry }, since: now, ...(entry.activity ? { activity: entry.activity } : {}) });
        events.push(`${label} started: ${oneLine(entry.description)} (${entry.runId})`);
        if (entry.status !== "running") events.push(this.settle(entry, now));
        continue;
      }
      const previous = known.entry;
      known.entry = { ...entry };
      // "turn finished" is always followed by the next activity or the end: it says nothing new.
      if (entry.status === "running" && entry.activity && entry.activity !== known.activity && entry.activity !== "turn finished") {
        known.activity = entry.activity;
        events.push(`${label} ${oneLine(entry.activity ?? "")}: ${oneLine(entry.description)}`);
      }
      if (previous.status === "running" && entry.status !== "running") events.push(this.settle(entry, now));
    }
    return events;
  }

  private settle(entry: ChildEntry, now: number): string {
    const tracked = this.byIndex.get(entry.index)!;
    tracked.until = now;
    const why = entry.error ? `: ${oneLine(entry.error)}` : "";
    return `child ${entry.index + 1} ${entry.status}: ${oneLine(entry.description)} (${seconds(now - tracked.since)}, ${tokens(entry.usage)})${why}`;
  }

  /**
   * At most `max` rows, each within `width` columns (wide characters count twice): a frame taller
   * or wider than the terminal loses its top lines, the run's title and what is running first.
   */
  rows(now: number, width: number, max: number): string[] {
    const all = [...this.byIndex.values()];
    const shown = childrenWorthShowing(all, all.length > max ? Math.max(0, max - 1) : max, ({ entry }) => entry.status);
    const rows = shown.map(({ entry, since, until }) => {
      const mark = MARK[entry.status];
      const elapsed = seconds((until ?? now) - since).padStart(6);
      const doing = oneLine(entry.status === "running" ? (entry.activity ?? "starting") : entry.error ? `${entry.status}: ${entry.error}` : entry.status);
      return `  ${mark} ${fitColumns(oneLine(entry.description), 28)} ${elapsed} ${tokens(entry.usage).padStart(14)}  ${doing}`;
    });
    if (shown.length < all.length) rows.push(`  … ${all.length - shown.length} more children not shown`);
    return rows.map((row) => truncateToWidth(row, width, "…"));
  }
}

/** `text` in exactly `columns` terminal columns: cut with an ellipsis, or padded. */
function fitColumns(text: string, columns: number): string {
  const cut = truncateToWidth(text, columns, "…");
  return cut + " ".repeat(Math.max(0, columns - visibleWidth(cut)));
}

function plainView(stream: NodeJS.WritableStream): ProgressView {
  const tracker = new ChildTracker();
  const line = (text: string) => void stream.write(`${text}\n`);
  return {
    started: (runId, title) => line(`run ${runId} started: ${title}`),
    children: (entries) => tracker.apply(entries, Date.now()).forEach(line),
    note: line,
    finished: line,
  };
}

function liveView(stream: NodeJS.WriteStream): ProgressView {
  const tracker = new ChildTracker();
  const render = createLogUpdate(stream, { showCursor: false });
  let header = "";
  const notes: string[] = [];
  let began = Date.now();
  const draw = () => {
    const now = Date.now();
    // The terminal's own width, however narrow: a wider row would wrap and push the title off.
    const width = Math.max(1, stream.columns || 100);
    const counts = [...tracker.byIndex.values()].reduce<Record<string, number>>((acc, { entry }) => {
      acc[entry.status] = (acc[entry.status] ?? 0) + 1;
      return acc;
    }, {});
    const summary = Object.entries(counts).map(([status, count]) => `${count} ${status}`).join(" · ");
    const fit = (line: string) => truncateToWidth(line, width, "…");
    const tail = [...(summary ? [`  ${summary}`] : []), ...notes].map(fit);
    // One row stays free: log-update leaves the cursor on the line after the frame.
    const room = Math.max(1, (stream.rows ?? 24) - 2 - tail.length);
    render([fit(`${header} · ${seconds(now - began)}`), ...tracker.rows(now, width, room), ...tail].join("\n"));
  };
  // The clock ticks for elapsed times only; it never keeps the process alive.
  const ticker = setInterval(draw, 250);
  ticker.unref();
  return {
    started(runId, title) {
      began = Date.now();
      header = `${title} · ${runId}`;
      draw();
    },
    children(entries) {
      tracker.apply(entries, Date.now());
      draw();
    },
    note(text) {
      notes.push(text);
      draw();
    },
    finished(text) {
      clearInterval(ticker);
      draw();
      render.done();
      stream.write(`${text}\n`);
    },
  };
}

/** A terminal that does not say its size (rows 0) cannot hold a redrawn view: plain lines there too. */
export function createProgressView(stream: NodeJS.WriteStream): ProgressView {
  return stream.isTTY && (stream.rows ?? 0) > 0 ? liveView(stream) : plainView(stream);
}
