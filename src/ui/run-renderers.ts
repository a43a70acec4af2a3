/**
 * Rows for external_delegate and external_workflow. Collapsed, a row is one line: mark, label,
 * role or workflow, description, elapsed, children done/total, tokens and cost (plus the error,
 * when it failed). Expanded, it adds the child's current activity or the workflow's children as a
 * tree, then the run's outcome, integrity, usage and answer. Everything comes from `details`, so
 * the row is live while the run goes and needs nothing the model sees.
 */
import type { Theme, ToolRenderResultOptions } from "@earendil-works/pi-coding-agent";
import { Container, Text, type Component } from "@earendil-works/pi-tui";
import { elapsedSince, formatCost, formatDuration, formatSpend, formatUsageDetail, oneLine, statusMark, statusOf, terminalText, type RowStatus } from "./format.ts";
import { FitLines, fitHeader } from "./lines.ts";
import { answerText, runFacts } from "./run-body.ts";
import { applyResult, markStarted, type RunRowState } from "./run-row.ts";
import { childCounts, childrenSpend, workflowTree } from "./workflow-tree.ts";
import type { RenderContext } from "./render-context.ts";
import { pickStrings } from "./call-args.ts";

export interface RunCallArgs {
  description?: string;
  role?: string;
  subagent_type?: string;
  harness?: string;
  workflow?: string;
  script?: string;
  /** external_workflow: the run a resume continues. */
  resume?: string;
  background?: boolean;
}

const CALL_FIELDS = ["description", "role", "subagent_type", "harness", "workflow", "script", "resume"] as const;

type Kind = "delegate" | "workflow";
interface ResultLike {
  content: { type: string; text?: string }[];
  details?: unknown;
}

function rowStatus(state: RunRowState): RowStatus {
  if (state.rejection !== undefined) return "rejected";
  const details = state.details;
  if (details?.phase === "accepted") return "accepted";
  if (details?.run && details.phase === "settled") return statusOf(details.run);
  if (state.plainText !== undefined) return "succeeded";
  return "running";
}

function rowName(kind: Kind, args: RunCallArgs): string {
  if (kind === "workflow") return args.workflow ?? (args.script !== undefined ? "inline" : args.resume !== undefined ? `resume of ${args.resume}` : "");
  const name = args.role ?? args.subagent_type ?? "";
  return args.harness && args.harness !== "pi" ? `${name} on ${args.harness}` : name;
}

function headerLine(kind: Kind, args: RunCallArgs, state: RunRowState, theme: Theme, width: number): string {
  const status = rowStatus(state);
  const [mark, color] = statusMark(status);
  const run = state.details?.run;
  const label = theme.fg("toolTitle", theme.bold(kind === "workflow" ? "Workflow" : "Delegate"));
  const name = rowName(kind, args);
  const lead = `${theme.fg(color, mark)} ${label}${name ? ` ${theme.fg("accent", oneLine(name))}` : ""}`;
  const description = oneLine(run?.task.description ?? args.description ?? "");
  const settled = status !== "running" && status !== "accepted";
  const elapsed = settled
    ? (run?.timing.durationMs ?? state.durationMs)
    : status === "accepted"
      ? undefined
      : elapsedSince(state.startedAt);
  const children = state.children;
  const counts = kind === "workflow" && children && children.length > 0 ? childCounts(children) : undefined;
  const usage = run?.usage ?? state.details?.progress?.usage ?? childrenSpend(children);
  const background = status === "accepted" ? "background" : "";
  const count = counts ? `${counts.done}/${counts.total}` : "";
  const failed = counts?.failed ? ` (${counts.failed} failed)` : "";
  const duration = formatDuration(elapsed);
  // Fullest first; on a narrow terminal tokens go first, then the failed count, then time.
  const tails = [
    [background, count + failed, duration, formatSpend(usage)],
    [background, count + failed, duration, formatCost(usage?.costUsd)],
    [background, count, duration, formatCost(usage?.costUsd)],
    [background, count, formatCost(usage?.costUsd)],
  ].map((parts) => theme.fg("dim", parts.filter(Boolean).join(" · ")));
  return fitHeader(width, lead, theme.fg("muted", description), tails);
}

function errorLine(state: RunRowState, theme: Theme): string | undefined {
  if (state.rejection !== undefined) return theme.fg("error", oneLine(state.rejection));
  const error = state.details?.run?.state.error;
  return error ? theme.fg("error", oneLine(`${error.code}: ${error.message}`)) : undefined;
}

function expandedBody(kind: Kind, state: RunRowState, theme: Theme): Component[] {
  // A rejection quotes the model's arguments (a workflow name, a role) as it wrote them.
  if (state.rejection !== undefined) return [new Text(theme.fg("error", terminalText(state.rejection)), 0, 0)];
  const details = state.details;
  const parts: Component[] = [];
  const progress = details?.progress;
  if (details?.phase === "running" && progress) {
    // A CLI child's activity may span lines (a codex shell command): a row's line must not.
    parts.push(new FitLines(() => [`${theme.fg("accent", oneLine(progress.activity))} · ${formatUsageDetail(progress.usage)}`]));
  }
  if (kind === "workflow" && state.children && state.children.length > 0) {
    const children = state.children;
    parts.push(new FitLines(() => workflowTree(children, theme)));
  }
  if (details?.phase === "accepted" && details.run) {
    // Details read back from a session file may hold anything: the run ID is drawn as text.
    const runId = oneLine(String(details.run.runId));
    parts.push(new Text(theme.fg("muted", `${runId} runs in the background; a message follows when it ends. /flow runs shows it live.`), 0, 0));
  } else if (details?.phase === "settled" && details.run) {
    const run = details.run;
    parts.push(new FitLines(() => runFacts(run, theme)));
    const answer = answerText(run, theme);
    if (answer) parts.push(new Text(answer, 0, 0));
  } else if (details?.runId && details.phase === "running") {
    const runId = oneLine(String(details.runId));
    parts.push(new FitLines(() => [theme.fg("dim", `run ${runId}`)]));
  }
  return parts;
}

export function runRenderers(kind: Kind) {
  return {
    renderCall(args: unknown, theme: Theme, context: RenderContext): Component {
      const state = context.state as RunRowState;
      markStarted(state, context.executionStarted);
      const call: RunCallArgs = pickStrings(args, CALL_FIELDS);
      return new FitLines((width) => [headerLine(kind, call, state, theme, width)]);
    },
    renderResult(result: ResultLike, options: ToolRenderResultOptions, theme: Theme, context: RenderContext): Component {
      const state = context.state as RunRowState;
      applyResult(state, {
        details: result.details,
        text: result.content.map((part) => part.text ?? "").join(""),
        isPartial: options.isPartial,
        isError: context.isError,
        durationMs: context.durationMs,
        invalidate: context.invalidate,
      });
      const container = new Container();
      if (!options.expanded) {
        const error = errorLine(state, theme);
        if (error) container.addChild(new FitLines(() => [error]));
        const plain = (state.plainText ?? state.partialText)?.split("\n")[0];
        if (plain) container.addChild(new FitLines(() => [theme.fg("toolOutput", oneLine(plain))]));
        return container;
      }
      const text = state.plainText ?? state.partialText;
      if (text) container.addChild(new Text(theme.fg("toolOutput", terminalText(text)), 0, 0));
      for (const part of expandedBody(kind, state, theme)) container.addChild(part);
      return container;
    },
  };
}

export const delegateRenderers = runRenderers("delegate");
export const workflowRenderers = runRenderers("workflow");
