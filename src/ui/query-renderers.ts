/**
 * Rows for external_runs and external_help: a one-line header (mark, label, action and targets),
 * the first line of the answer when collapsed, the whole answer when expanded. While a wait runs,
 * its latest note shows beneath; the final result is never replaced by a later update.
 */
import type { Theme, ToolRenderResultOptions } from "@earendil-works/pi-coding-agent";
import { Container, Text, type Component } from "@earendil-works/pi-tui";
import { elapsedSince, formatDuration, oneLine, statusMark, terminalText } from "./format.ts";
import { FitLines, fitHeader } from "./lines.ts";
import type { RenderContext } from "./render-context.ts";
import { stringArg, stringsArg } from "./call-args.ts";

interface QueryState {
  final?: boolean;
  isError?: boolean;
  text?: string;
  startedAt?: number;
  durationMs?: number;
}

interface ResultLike {
  content: { type: string; text?: string }[];
}

/** How many answer lines an expanded query row shows. */
const EXPANDED_LINES = 40;

function queryRenderers(label: string, describe: (args: unknown) => string) {
  const header = (args: unknown, state: QueryState, theme: Theme, width: number): string => {
    const [mark, color] = state.final ? statusMark(state.isError ? "failed" : "succeeded") : statusMark("running");
    const lead = `${theme.fg(color, mark)} ${theme.fg("toolTitle", theme.bold(label))}`;
    const elapsed = state.final ? state.durationMs : elapsedSince(state.startedAt);
    // The arguments are the model's: a topic or run ID may carry escape sequences or line breaks.
    return fitHeader(width, lead, theme.fg("accent", oneLine(describe(args))), theme.fg("dim", formatDuration(elapsed)));
  };
  return {
    renderCall(args: unknown, theme: Theme, context: RenderContext): Component {
      const state = context.state as QueryState;
      if (context.executionStarted) state.startedAt ??= Date.now();
      return new FitLines((width) => [header(args, state, theme, width)]);
    },
    renderResult(result: ResultLike, options: ToolRenderResultOptions, theme: Theme, context: RenderContext): Component {
      const state = context.state as QueryState;
      const text = result.content.map((part) => part.text ?? "").join("").replace(/\r/g, "").trimEnd();
      if (!(state.final && options.isPartial)) {
        state.text = text;
        if (!options.isPartial) {
          state.final = true;
          state.isError = context.isError;
          state.durationMs = context.durationMs;
        }
      }
      // A child's answer or log as written: escape sequences would reach the terminal (the clipboard, the title).
      const shown = terminalText(state.text ?? "");
      const color = state.isError ? "error" : options.isPartial ? "muted" : "toolOutput";
      const container = new Container();
      if (!shown) return container;
      if (!options.expanded) {
        const first = oneLine(shown.split("\n")[0] ?? "");
        container.addChild(new FitLines(() => [theme.fg(color, first)]));
        return container;
      }
      const lines = shown.split("\n");
      const body = lines.slice(0, EXPANDED_LINES).map((line) => theme.fg(color, line.replace(/\t/g, "  ")));
      if (lines.length > EXPANDED_LINES) body.push(theme.fg("muted", `… ${lines.length - EXPANDED_LINES} more lines`));
      container.addChild(new Text(body.join("\n"), 0, 0));
      return container;
    },
  };
}

// Each field is read for its type: the arguments are the model's, drawn before Pi validates them.
export const runsRenderers = queryRenderers("Runs", (args) => {
  const view = stringArg(args, "view");
  return [stringArg(args, "action") ?? "", view && view !== "summary" ? view : "", stringsArg(args, "runIds").join(" ")].filter(Boolean).join(" ");
});

export const helpRenderers = queryRenderers("Help", (args) => ["topic", "tool", "harness"].map((name) => stringArg(args, name) ?? "").filter(Boolean).join(" "));
