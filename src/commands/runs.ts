/**
 * `/flow runs`: this session's runs, newest first, one line each with status, duration and cost;
 * one run's facts and answer (inspect), the end of its output (tail), or a cancel request. The
 * same RunStore the external_runs tool reads, so both always agree.
 */
import { usageAmount, type RunView } from "../contract/run-schema.ts";
import type { RunStore } from "../runs/index.ts";
import { counted, elapsedSince, formatCost, formatDuration, formatSpend, formatUsageDetail, oneLine, runName, statusMark, statusOf, statusWord } from "../ui/index.ts";

/** How much of the end of a run's output `tail` reads, and how many of its last lines it shows. */
const TAIL_READ_BYTES = 64 * 1024;
export const TAIL_LINES = 20;

/** The most of a run's description a listed line shows, as much as external_delegate takes: a workflow's agent() may give a megabyte. */
const DESCRIPTION_MAX = 200;

export function runLine(view: RunView, now = Date.now()): string {
  const status = statusOf(view);
  const name = view.kind === "workflow" ? `workflow ${runName(view)}` : runName(view, "agent");
  const took = formatDuration(view.timing.durationMs ?? elapsedSince(view.timing.startedAt, undefined, now));
  const spend = formatSpend(view.usage);
  const counts = view.children ? ` · ${counted(view.children.count, "child", "children")}${view.children.failed ? `, ${view.children.failed} failed` : ""}` : "";
  // The whole line is made text: the picker hands it to Pi's selector as it is, and a record's name or counts may be forged.
  return oneLine(`${statusMark(status)[0]} ${view.runId} ${name}: ${oneLine(view.task.description, DESCRIPTION_MAX)} · ${statusWord(status)}${counts}${took ? ` · ${took}` : ""}${spend ? ` · ${spend}` : ""}`);
}

/** Newest first, workflows and children together. */
export function listedRuns(store: RunStore, limit = 50): RunView[] {
  const { runs, workflows } = store.list({ limit });
  return [...runs, ...workflows].sort((a, b) => b.timing.startedAt.localeCompare(a.timing.startedAt)).slice(0, limit);
}

export function listLines(views: readonly RunView[]): string[] {
  if (views.length === 0) return ["No runs in this session yet."];
  // A cost forged negative or as text counts as none: it must not take spending off the total.
  const total = views.reduce((sum, view) => sum + usageAmount(view.usage?.costUsd), 0);
  const lines = views.map((view) => runLine(view));
  if (total > 0) lines.push(`Total cost of these runs: ${formatCost(total)}`);
  return lines;
}

/** `supervised` false: a session not saved to a file, whose runs external_runs refuses to page. */
export function inspectLines(view: RunView, supervised = true): string[] {
  const status = statusOf(view);
  const lines = [
    runLine(view),
    `outcome: ${statusWord(status)} · integrity ${view.integrity} · ${view.live ? "live" : "not live"}${view.background ? " · background" : ""}`,
    `started ${view.timing.startedAt}${view.timing.endedAt ? `, ended ${view.timing.endedAt}` : ""}`,
  ];
  if (view.task.parentRunId) lines.push(`child of ${view.task.parentRunId}`);
  if (view.state.error) lines.push(oneLine(`error: ${view.state.error.code}: ${view.state.error.message}`));
  const usage = formatUsageDetail(view.usage);
  if (usage) lines.push(`usage: ${usage}`);
  if (view.output.delivery === "inline") {
    const value = typeof view.output.value === "string" ? view.output.value : JSON.stringify(view.output.value, null, 2);
    lines.push(view.output.redacted ? "answer (secrets redacted):" : "answer:", ...value.split("\n"));
  } else if (view.output.delivery === "reference") {
    lines.push(
      supervised
        ? `answer: over 16 KiB; page it with external_runs ${JSON.stringify(view.refs.final ?? view.refs.summary)}`
        : `answer: over 16 KiB; /flow report ${view.runId} shows it (this session is not saved to a file)`,
    );
  } else lines.push("answer: none");
  return lines;
}

/**
 * A workflow's output log is a JSON array with one message a line: the messages' text, in order.
 * A message the read's start cut in half is left out.
 */
function messagesText(json: string): string {
  const texts: string[] = [];
  for (const line of json.split("\n")) {
    let message: unknown;
    try {
      message = JSON.parse(line.replace(/,$/, ""));
    } catch {
      continue; // the array's brackets, or a cut message
    }
    const text = (message as { text?: unknown } | null)?.text;
    if (typeof text === "string") texts.push(text.endsWith("\n") ? text.slice(0, -1) : text);
  }
  return texts.join("\n");
}

/** The last lines of a run's output log (a workflow's console lines, not its JSON), from its last bytes only. */
export function tailLines(store: RunStore, runId: string): string[] {
  const log = store.inspectTail(runId, "output", TAIL_READ_BYTES);
  const text = store.view(runId).kind === "workflow" ? messagesText(log) : log;
  const lines = text.replace(/\r/g, "").split("\n").filter((line, index, all) => line !== "" || index < all.length - 1);
  if (lines.length === 0) return ["(no output yet)"];
  return lines.slice(-TAIL_LINES);
}
