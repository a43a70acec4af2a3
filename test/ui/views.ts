/**
 * Rendering pi-flow's views the way Pi's interactive mode does: a tool row is Pi's own
 * ToolExecutionComponent and a completion message Pi's CustomMessageComponent, with Pi's dark
 * theme; lines come back with the terminal's escape sequences stripped, as a person reads them.
 */
import { CustomMessageComponent, initTheme, ToolExecutionComponent, type ToolRenderers } from "@earendil-works/pi-coding-agent";
import { stripTerminalSequences, visibleWidth, type TUI } from "@earendil-works/pi-tui";
import type { RunView } from "../../src/contract/run-schema.ts";
import { renderCompletionMessage, renderCompletionsMessage } from "../../src/ui/completion-message.ts";

initTheme("dark");

/** The screen a row asks to redraw; rendering is driven by the test, so a redraw request is noted only. */
export const screen = { redraws: 0, requestRender() { this.redraws++; } };

export const WIDTHS = [40, 80, 120] as const;

export interface Update {
  details: unknown;
  text?: string;
  isError?: boolean;
  partial?: boolean;
  durationMs?: number;
}

export function toolRow(tool: string, renderers: object, args: Record<string, unknown>, updates: Update[], expanded = false): ToolExecutionComponent {
  const row = new ToolExecutionComponent(tool, "call_1", args, { outputPad: 1 }, renderers as ToolRenderers, screen as unknown as TUI, "/project");
  row.setArgsComplete();
  row.markExecutionStarted();
  for (const update of updates) {
    row.updateResult(
      { content: [{ type: "text", text: update.text ?? "" }], details: update.details, isError: update.isError ?? false, ...(update.durationMs === undefined ? {} : { durationMs: update.durationMs }) },
      update.partial ?? false,
    );
  }
  row.setExpanded(expanded);
  return row;
}

export function completionRow(view: RunView, expanded = false): CustomMessageComponent {
  const message = { role: "custom", customType: "pi-flow-run-completed", content: `Background run ${view.runId} finished.`, display: true, details: view, timestamp: 0 } as const;
  const row = new CustomMessageComponent(message as never, renderCompletionMessage as never, undefined, 1);
  row.setExpanded(expanded);
  return row;
}

/** The message of several completions sent together, as the transcript draws it. */
export function completionsRow(views: RunView[], expanded = false): CustomMessageComponent {
  const message = { role: "custom", customType: "pi-flow-runs-completed", content: `${views.length} background runs finished.`, display: true, details: { runs: views }, timestamp: 0 } as const;
  const row = new CustomMessageComponent(message as never, renderCompletionsMessage as never, undefined, 1);
  row.setExpanded(expanded);
  return row;
}

/** Lines as seen, trailing blanks trimmed; throws if any is wider than the width. */
export function seen(component: { render(width: number): readonly string[] }, width: number): string {
  const lines = component.render(width);
  for (const line of lines) {
    if (visibleWidth(line) > width) throw new Error(`a line is ${visibleWidth(line)} columns at width ${width}: ${stripTerminalSequences(line)}`);
  }
  return lines.map((line) => stripTerminalSequences(line).trimEnd()).join("\n");
}

const START = "2026-01-05T10:00:00.000Z";

export function runView(overrides: Partial<RunView> & Pick<RunView, "runId" | "kind">): RunView {
  return {
    task: { description: "Count the TypeScript files", role: "explorer", harness: "pi" },
    live: false,
    background: false,
    state: { status: "done", outcome: "succeeded" },
    timing: { startedAt: START, endedAt: "2026-01-05T10:00:12.400Z", durationMs: 12_400 },
    integrity: "complete",
    output: { finalAvailable: true, delivery: "inline", value: "There are 42 TypeScript files under src/." },
    refs: { summary: { action: "inspect", runIds: [overrides.runId], view: "summary" }, final: { action: "inspect", runIds: [overrides.runId], view: "final" } },
    usage: { turns: 2, toolCalls: 3, inputTokens: 1800, outputTokens: 420, cacheReadTokens: 5200, cacheWriteTokens: 900, costUsd: 0.0213 },
    ...overrides,
  };
}

/** Pi's current theme (the one initTheme set), from the module Pi's own components read it from. */
const themeModule = new URL("./modes/interactive/theme/theme.js", import.meta.resolve("@earendil-works/pi-coding-agent"));
export const theme = ((await import(themeModule.href)) as { theme: import("@earendil-works/pi-coding-agent").Theme }).theme;
