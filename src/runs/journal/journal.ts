import type { RunOutcome } from "../../contract/run-schema.ts";
import type { RunKind } from "../ids.ts";

/**
 * The run journal: one JSON object per line, append-only. Every line names its run and its position
 * (`seq`), so a reader can tell a torn tail (the last write never finished) from damage (a bad line
 * with records after it, or a line from another run). Only the start line's `v` selects the format.
 */
export const JOURNAL_VERSION = 1;

export interface TaskIdentity {
  description: string;
  role?: string;
  subagentType?: string;
  harness?: string;
  workflow?: string;
  source?: "shipped" | "project" | "user" | "inline";
  parentRunId?: string;
  /** The interrupted workflow run this one resumes. */
  resumedFrom?: string;
  /**
   * The line of work this run belongs to (the public view's `correlationId`): the first run's ID,
   * kept by every resume and shared by a workflow's children. Set at creation; records written
   * before it existed lack it, and read as their own run ID.
   */
  correlationId?: string;
}

export interface ChildCounts {
  count: number;
  failed?: number;
  /** A resumed workflow: agent() and tools.* calls answered from the journal, and calls that ran. */
  replayed?: number;
  live?: number;
}

/** What a child in its own worktree changed against its base (src/isolation/). */
export interface ChangeStats {
  files: number;
  insertions: number;
  deletions: number;
}

export interface Usage {
  turns?: number;
  toolCalls?: number;
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  costUsd?: number;
}

export interface RunError {
  code: string;
  message: string;
}

/** What the final file holds: agent text (`text`), agent JSON text (`json-text`), or `{"result":…}` (`result-json`). */
export type FinalFormat = "text" | "json-text" | "result-json";

export interface FinalMeta {
  format: FinalFormat;
  /** UTF-8 bytes of the value's JSON encoding: the 16 KiB delivery rule is measured on this. */
  valueJsonBytes: number;
  /** UTF-8 bytes of the final view document (the file). */
  documentBytes: number;
  redacted: boolean;
  /** False when the value is held in memory only, because writing it failed. */
  saved: boolean;
  /** The value is in the terminal line (`finalValue`), not in a final file: it is small enough to go inline. */
  inJournal?: true;
}

interface LineBase {
  v: number;
  seq: number;
  runId: string;
  at: string;
}

export interface StartLine extends LineBase {
  t: "start";
  kind: RunKind;
  task: TaskIdentity;
  background: boolean;
  /** The UTF-8 length of `launch`'s JSON, written just before it so the launch view can page it in place. */
  launchBytes?: number;
  /** Private launch details (harness, model, prompt, limits…), redacted: the `launch` view only. Always the line's last field. */
  launch?: Record<string, unknown>;
}

export interface ChildLine {
  t: "child";
  childRunId?: string;
  event?: string;
  outcome?: RunOutcome;
  data?: unknown;
}

export interface StoreLine {
  t: "store";
  key: string;
  value: unknown;
}

/** Open-ended records for the workflow runtime (seeds, clock readings) that are not children or stores. */
export interface EventLine {
  t: "event";
  name: string;
  data?: unknown;
}

export interface TerminalLine extends LineBase {
  t: "terminal";
  outcome: RunOutcome;
  error?: RunError;
  endedAt: string;
  children?: ChildCounts;
  usage?: Usage;
  /** Worktree isolation: what the child changed (src/isolation/). */
  changes?: ChangeStats;
  final?: FinalMeta;
  /** The final value itself (redacted), when `final.inJournal`. */
  finalValue?: unknown;
}

/** Lines a run's owner may add between start and terminal. */
export type BodyLine = ChildLine | StoreLine | EventLine;
export type JournalLine = StartLine | TerminalLine | (BodyLine & LineBase);

export function encodeLine(line: JournalLine): string {
  return `${JSON.stringify(line)}\n`;
}

const OUTCOMES = new Set(["succeeded", "failed", "cancelled", "timed_out"]);
const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Shape check of one parsed line; anything that fails it is a "bad line". */
export function isWellFormed(line: Record<string, unknown>): line is Record<string, unknown> & JournalLine {
  if (typeof line.seq !== "number" || typeof line.runId !== "string" || typeof line.at !== "string") return false;
  switch (line.t) {
    case "start":
      return (
        (line.kind === "agent" || line.kind === "workflow") &&
        isObject(line.task) &&
        typeof line.task.description === "string" &&
        typeof line.background === "boolean"
      );
    case "terminal":
      return typeof line.outcome === "string" && OUTCOMES.has(line.outcome) && typeof line.endedAt === "string";
    case "child":
      return true;
    case "store":
      return typeof line.key === "string" && "value" in line;
    case "event":
      return typeof line.name === "string";
    default:
      return false;
  }
}
