/**
 * The background runs of this session, live above the editor: one line per run (mark, kind and
 * name, description, children done/total or current activity, elapsed, cost), and a status-line
 * segment with the count. Both go away when no run is left. Drawn only in Pi's interactive TUI:
 * RPC, JSON and print modes get no widget calls at all.
 */
import type { ExtensionContext, Theme } from "@earendil-works/pi-coding-agent";
import type { Component, TUI } from "@earendil-works/pi-tui";
import type { RunView } from "../contract/run-schema.ts";
import type { RunStore } from "../runs/index.ts";
import { elapsedSince, formatCost, formatDuration, oneLine, runName, statusMark, statusOf } from "./format.ts";
import { FitLines, fitHeader } from "./lines.ts";
import { forgetProgress, liveProgress } from "../orchestrator/session/index.ts";
import { childCounts, childrenSpend } from "./workflow-tree.ts";

export const WIDGET_KEY = "pi-flow-runs";
export const STATUS_KEY = "pi-flow";
const MAX_LINES = 6;

/** Where the widget finds the session's background runs, and hears when that set changes. */
export interface BackgroundSource {
  background(ctx: ExtensionContext): ReadonlyMap<string, { runs: RunStore }>;
  onBackgroundChange(listener: () => void): () => void;
}

export function backgroundLine(view: RunView, theme: Theme, width: number, now = Date.now()): string {
  const [mark, color] = statusMark(statusOf(view));
  const lead = `${theme.fg(color, mark)} ${theme.fg("toolTitle", view.kind === "workflow" ? "Workflow" : "Delegate")} ${theme.fg("accent", oneLine(runName(view)))}`;
  const live = liveProgress(view.runId);
  let doing = "";
  let usage = view.usage;
  if (live?.children && live.children.length > 0) {
    const counts = childCounts(live.children);
    doing = `${counts.done}/${counts.total} children`;
    usage ??= childrenSpend(live.children);
  } else if (live?.progress) {
    doing = oneLine(live.progress.activity);
    usage ??= live.progress.usage;
  } else if (view.state.status === "queued") {
    doing = "waiting for a slot";
  }
  const elapsed = formatDuration(elapsedSince(view.timing.startedAt, view.timing.endedAt, now));
  const cost = formatCost(usage?.costUsd);
  const tails = [[doing, elapsed, cost], [doing, elapsed], [elapsed]].map((parts) => theme.fg("dim", parts.filter(Boolean).join(" · ")));
  return fitHeader(width, lead, theme.fg("muted", oneLine(view.task.description)), tails);
}

export class BackgroundRunsWidget {
  private readonly source: BackgroundSource;
  private ctx: ExtensionContext | undefined;
  private unsubscribe: (() => void) | undefined;
  private shown = false;
  private views: RunView[] = [];
  private known = new Set<string>();

  constructor(source: BackgroundSource) {
    this.source = source;
  }

  /** Starts showing this session's background runs; a no-op outside the interactive TUI. */
  attach(ctx: ExtensionContext): void {
    this.detach();
    if (ctx.mode !== "tui" || !ctx.hasUI) return;
    this.ctx = ctx;
    this.unsubscribe = this.source.onBackgroundChange(() => this.refresh());
    this.refresh();
  }

  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.ctx && this.shown) this.hide(this.ctx);
    this.ctx = undefined;
  }

  /** Reads the runs again (on a change, and each second while some run). */
  refresh(): void {
    const ctx = this.ctx;
    if (!ctx) return;
    const background = this.source.background(ctx);
    for (const runId of this.known) if (!background.has(runId)) forgetProgress(runId);
    this.known = new Set(background.keys());
    this.views = [];
    for (const [runId, { runs }] of background) {
      try {
        this.views.push(runs.view(runId));
      } catch {
        // Gone from the store (pruned, or its session closed): nothing to show.
      }
    }
    if (this.views.length === 0) return this.hide(ctx);
    const count = this.views.length;
    ctx.ui.setStatus(STATUS_KEY, `flow: ${count} background run${count === 1 ? "" : "s"}`);
    if (!this.shown) {
      this.shown = true;
      ctx.ui.setWidget(WIDGET_KEY, (tui, theme) => this.component(tui, theme));
    }
  }

  private hide(ctx: ExtensionContext): void {
    if (!this.shown) return;
    this.shown = false;
    ctx.ui.setWidget(WIDGET_KEY, undefined);
    ctx.ui.setStatus(STATUS_KEY, undefined);
  }

  private component(tui: TUI, theme: Theme): Component & { dispose(): void } {
    // Elapsed times and children counts move on their own: redraw once a second while shown.
    const tick = setInterval(() => {
      this.refresh();
      tui.requestRender();
    }, 1000).unref();
    const lines = new FitLines((width) => {
      const shown = this.views.slice(0, MAX_LINES).map((view) => backgroundLine(view, theme, width));
      if (this.views.length > MAX_LINES) shown.push(theme.fg("muted", `… and ${this.views.length - MAX_LINES} more: /flow runs`));
      return shown;
    });
    return Object.assign(lines, { dispose: () => clearInterval(tick) });
  }
}
