/**
 * The completion message of a background run, as the transcript shows it: one line (mark,
 * "Background", the run's kind and name, description, duration, tokens, cost) and, for a failure,
 * its error; expanded, the run's facts and its answer. The model reads the message's text content,
 * never this drawing.
 */
import type { MessageRenderOptions, Theme } from "@earendil-works/pi-coding-agent";
import { Container, Text, type Component } from "@earendil-works/pi-tui";
import type { ServedRunView } from "../contract/run-schema.ts";
import { formatCost, formatDuration, formatSpend, oneLine, runName, statusMark, statusOf } from "./format.ts";
import { FitLines, fitHeader } from "./lines.ts";
import { answerText, runFacts } from "./run-body.ts";
import { isRunView } from "./shapes.ts";

interface CompletionMessage {
  content: string | { type: string; text?: string }[];
  details?: unknown;
}

export function completionHeader(view: ServedRunView, theme: Theme, width: number): string {
  const [mark, color] = statusMark(statusOf(view));
  const name = runName(view);
  const label = theme.fg("toolTitle", theme.bold(view.kind === "workflow" ? "Background workflow" : "Background delegate"));
  const lead = `${theme.fg(color, mark)} ${label}${name ? ` ${theme.fg("accent", oneLine(name))}` : ""}`;
  const took = formatDuration(view.timing.durationMs);
  const tails = [[took, formatSpend(view.usage)], [took, formatCost(view.usage?.costUsd)], [formatCost(view.usage?.costUsd)]];
  return fitHeader(width, lead, theme.fg("muted", oneLine(view.task.description)), tails.map((parts) => theme.fg("dim", parts.filter(Boolean).join(" · "))));
}

export function renderCompletionMessage(message: CompletionMessage, options: MessageRenderOptions, theme: Theme): Component | undefined {
  const view = message.details;
  // A message without a run view (written by another version) falls back to Pi's own drawing.
  if (!isRunView(view)) return undefined;
  const container = new Container();
  const pad = options.outputPad;
  container.addChild(new FitLines((width) => [completionHeader(view, theme, width)]));
  if (!options.expanded) {
    const error = view.state.error;
    if (error) container.addChild(new FitLines(() => [theme.fg("error", oneLine(`${error.code}: ${error.message}`))]));
    return padded(container, pad);
  }
  container.addChild(new FitLines(() => runFacts(view, theme)));
  const answer = answerText(view, theme);
  if (answer) container.addChild(new Text(answer, 0, 0));
  return padded(container, pad);
}

/**
 * A batch of completions (several background runs that settled close together, sent as one
 * message): each run as its own completion, one after the other.
 */
export function renderCompletionsMessage(message: CompletionMessage, options: MessageRenderOptions, theme: Theme): Component | undefined {
  const runs = (message.details as { runs?: unknown } | undefined)?.runs;
  if (!Array.isArray(runs) || !runs.every(isRunView)) return undefined;
  const container = new Container();
  for (const view of runs) {
    const drawn = renderCompletionMessage({ content: "", details: view }, options, theme);
    if (drawn) container.addChild(drawn);
  }
  return container;
}

/** Pi's own custom messages are indented by the outputPad setting; this keeps ours in line. */
function padded(inner: Component, pad: number): Component {
  if (pad <= 0) return inner;
  return new FitLines((width) => inner.render(Math.max(1, width - pad)).map((line) => " ".repeat(pad) + line));
}
