/**
 * The expanded lines of one run: where it stands, what went wrong, what it spent, and its answer
 * or where to page it. Shared by tool rows, completion messages and `/flow runs`.
 */
import type { Theme } from "@earendil-works/pi-coding-agent";
import type { ServedRunView } from "../contract/run-schema.ts";
import { formatDuration, formatUsageDetail, oneLine, statusMark, statusOf, statusWord, terminalText } from "./format.ts";

/** How many lines of an inline answer an expanded row shows before pointing to the rest. */
export const ANSWER_PREVIEW_LINES = 20;

function field(theme: Theme, name: string, value: string): string {
  return `${theme.fg("muted", name.padEnd(9))}${value}`;
}

/** Fact lines (cut to the width by FitLines): run, outcome, error, children, usage. */
export function runFacts(view: ServedRunView, theme: Theme): string[] {
  const status = statusOf(view);
  const [mark, color] = statusMark(status);
  // A view read back from a session file (imported, or edited) may hold anything in any field: each is drawn as one line of text.
  const harness = view.task.harness && view.task.harness !== "pi" ? ` · ${oneLine(String(view.task.harness))}` : "";
  const lines = [field(theme, "run", oneLine(`${view.runId} · ${view.kind}${view.background ? " · background" : ""}${harness}`))];
  const took = formatDuration(view.timing.durationMs);
  lines.push(field(theme, "outcome", `${theme.fg(color, `${mark} ${statusWord(status)}`)}${took ? ` in ${took}` : ""} · ${oneLine(`integrity ${view.integrity} · delivery ${view.output.delivery}`)}`));
  if (view.state.error) lines.push(field(theme, "error", theme.fg("error", oneLine(`${view.state.error.code}: ${view.state.error.message}`))));
  if (view.children) {
    const failed = view.children.failed ? `, ${view.children.failed} failed` : "";
    lines.push(field(theme, "children", `${view.children.count}${failed}`));
  }
  const usage = formatUsageDetail(view.usage);
  if (usage) lines.push(field(theme, "usage", usage));
  return lines;
}

/** The answer as wrapped text, or one line saying where it is; empty when there is none. */
export function answerText(view: ServedRunView, theme: Theme, maxLines = ANSWER_PREVIEW_LINES): string {
  const { output } = view;
  if (output.delivery === "reference") {
    // No refs: a session not saved to a file, where external_runs refuses; /flow report reads the run store.
    if (!view.refs) return theme.fg("muted", oneLine(`answer   over 16 KiB: /flow report ${view.runId} shows it (this session is not saved to a file)`));
    const call = JSON.stringify(view.refs.final ?? view.refs.summary);
    return theme.fg("muted", oneLine(`answer   over 16 KiB, by reference: external_runs ${call}`));
  }
  if (output.delivery !== "inline") return "";
  const text = typeof output.value === "string" ? output.value : JSON.stringify(output.value, null, 2);
  // The answer is a model's text: a child may have written escape sequences into it.
  const lines = terminalText(text.replace(/\t/g, "  ")).split("\n");
  const shown = lines.slice(0, maxLines).map((line) => theme.fg("toolOutput", line));
  if (lines.length > maxLines) {
    const rest = view.refs ? `external_runs inspect ${oneLine(view.runId)} view final` : `/flow runs ${oneLine(view.runId)} inspect shows them all`;
    shown.push(theme.fg("muted", `… ${lines.length - maxLines} more lines (${rest})`));
  }
  const head = theme.fg("muted", output.redacted ? "answer (secrets redacted)" : "answer");
  return [head, ...shown].join("\n");
}
