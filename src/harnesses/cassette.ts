import { createHash } from "node:crypto";
import { FlowError } from "../contract/errors.ts";
import { CASSETTE_MAX_BYTES, readUserFile } from "../runs/user-file.ts";
import type { ChildOutcome, ChildTask, ChildUsage } from "./types.ts";
import { isRecord } from "./cli/guards.ts";

/**
 * A cassette: children's answers recorded by `flow run --record` (or written by hand), which the
 * replay harness serves back with no model. JSON Lines, one object per line:
 *
 *   line 1    the header: format, version, whether the answers are illustrative, a note
 *   line 2…   one entry per settled child: its key, outcome, answer (or error), usage and timing
 *
 * A key says who asked and what: the agent (`role:<name>` or `agent:<Pi agent definition>`), the
 * description, the occurrence (1 for the first child with that agent and description among the
 * children of its workflow run, 2 for the next…) and a hash of the whole prompt (rendered parent
 * context included) and the outputSchema. Strict replay matches all four; loose replay ignores the
 * hash, for scripts whose prompts changed. See docs/cli.md.
 */
export const CASSETTE_FORMAT = "pi-flow-cassette";
export const CASSETTE_VERSION = 1;

export interface CassetteHeader {
  format: typeof CASSETTE_FORMAT;
  version: typeof CASSETTE_VERSION;
  /** True when the answers were written to illustrate, not said by a model. */
  illustrative: boolean;
  note: string;
  createdAt: string;
}

export interface CassetteKey {
  agent: string;
  description: string;
  occurrence: number;
  promptHash: string;
}

/** Cancelled children are never recorded: a cancel comes from outside the child, not from its answer. */
export type RecordedOutcome = Exclude<ChildOutcome, "cancelled">;

export interface CassetteEntry {
  key: CassetteKey;
  outcome: RecordedOutcome;
  /** The canonical answer of a child that succeeded: its text, or the JSON value under an outputSchema. */
  answer?: unknown;
  error?: { code: string; message: string };
  usage: ChildUsage;
  timing: { startedAt: string; durationMs: number };
}

export interface Cassette {
  header: CassetteHeader;
  entries: CassetteEntry[];
}

export type ReplayMode = "strict" | "loose";
export const REPLAY_MODES: readonly ReplayMode[] = ["strict", "loose"];

export function recordedHeader(): CassetteHeader {
  return {
    format: CASSETTE_FORMAT,
    version: CASSETTE_VERSION,
    illustrative: false,
    note: "Recorded by pi-flow: each answer is what the child's model said.",
    createdAt: new Date().toISOString(),
  };
}

// Run IDs and ISO times change from run to run; a prompt that quotes them (a handoff packet's
// sourceRunId and capturedAt) must still find its answer.
const RUN_IDS = /\b(?:ag|wf)_[0-9a-z]{9}_[0-9a-z]{10}\b/g;
const ISO_TIMES = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b/g;

/** `sha256:` and 16 hex digits of the prompt (run IDs and times masked) and the outputSchema. */
export function promptHash(prompt: string, outputSchema?: Record<string, unknown>): string {
  const normalized = prompt.replace(RUN_IDS, "<run>").replace(ISO_TIMES, "<time>");
  const digest = createHash("sha256").update(normalized).update("\0").update(JSON.stringify(outputSchema ?? null)).digest("hex");
  return `sha256:${digest.slice(0, 16)}`;
}

/** `role:reviewer "Review tests" #1 sha256:…`, as error messages name a key. */
export function describeKey(key: CassetteKey): string {
  return `${key.agent} ${JSON.stringify(key.description)} #${key.occurrence} ${key.promptHash}`;
}

/**
 * Counts children by agent and description within their workflow run, so the nth such child gets
 * occurrence n. Children started outside a workflow are counted together.
 */
export class OccurrenceCounter {
  private readonly seen = new Map<string, number>();

  next(task: ChildTask): number {
    const id = JSON.stringify([task.parentRunId ?? "", task.agent, task.description]);
    const occurrence = (this.seen.get(id) ?? 0) + 1;
    this.seen.set(id, occurrence);
    return occurrence;
  }
}

function sameIdentity(entry: CassetteEntry, key: CassetteKey): boolean {
  return entry.key.agent === key.agent && entry.key.description === key.description && entry.key.occurrence === key.occurrence;
}

export function findEntry(cassette: Cassette, key: CassetteKey, mode: ReplayMode): CassetteEntry | undefined {
  return cassette.entries.find((entry) => sameIdentity(entry, key) && (mode === "loose" || entry.key.promptHash === key.promptHash));
}

function commonPrefix(a: string, b: string): number {
  let length = 0;
  while (length < a.length && length < b.length && a[length] === b[length]) length++;
  return length;
}

/** The recorded key most like `key`: same agent first, then description, occurrence and prompt. */
export function nearestKey(cassette: Cassette, key: CassetteKey): CassetteKey | undefined {
  let best: { key: CassetteKey; score: number } | undefined;
  for (const { key: candidate } of cassette.entries) {
    const score =
      (candidate.agent === key.agent ? 1000 : 0) +
      (candidate.description === key.description ? 500 : commonPrefix(candidate.description, key.description)) +
      (candidate.promptHash === key.promptHash ? 50 : 0) +
      (candidate.occurrence === key.occurrence ? 10 : 0);
    if (!best || score > best.score) best = { key: candidate, score };
  }
  return best?.key;
}

// ---------------------------------------------------------------------------------------------
// Reading and checking

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

function checkHeader(value: unknown): string | undefined {
  if (!isRecord(value) || value.format !== CASSETTE_FORMAT) return `the first line is not a ${CASSETTE_FORMAT} header`;
  if (value.version !== CASSETTE_VERSION) return `cassette version ${JSON.stringify(value.version)} is not supported (supported: ${CASSETTE_VERSION})`;
  if (typeof value.illustrative !== "boolean" || typeof value.note !== "string") return "the header needs illustrative (boolean) and note (string)";
  return undefined;
}

function checkEntry(value: unknown): string | undefined {
  if (!isRecord(value) || !isRecord(value.key)) return "an entry needs a key object";
  const { key } = value;
  if (typeof key.agent !== "string" || typeof key.description !== "string") return "key.agent and key.description must be strings";
  if (!isCount(key.occurrence) || key.occurrence < 1) return "key.occurrence must be a positive integer";
  if (typeof key.promptHash !== "string") return "key.promptHash must be a string";
  if (value.outcome !== "succeeded" && value.outcome !== "failed" && value.outcome !== "timed_out") {
    return "outcome must be succeeded, failed or timed_out";
  }
  if (value.outcome === "succeeded" && value.answer === undefined) return "a succeeded entry needs an answer";
  if (value.error !== undefined && (!isRecord(value.error) || typeof value.error.message !== "string")) return "error must be { code, message }";
  const usage = value.usage;
  if (!isRecord(usage) || !["turns", "toolCalls", "inputTokens", "outputTokens"].every((field) => isCount(usage[field]))) {
    return "usage needs turns, toolCalls, inputTokens and outputTokens";
  }
  if (!isRecord(value.timing) || typeof value.timing.startedAt !== "string" || !isCount(value.timing.durationMs)) {
    return "timing needs startedAt and durationMs";
  }
  return undefined;
}

/** Parses a cassette's text; any problem is configuration_invalid naming the file and line. */
export function parseCassette(text: string, label: string): Cassette {
  const lines = text.split("\n");
  const bad = (line: number, problem: string) => new FlowError("configuration_invalid", `Cassette ${label}, line ${line}: ${problem}.`);
  const parseLine = (index: number): unknown => {
    try {
      return JSON.parse(lines[index]!) as unknown;
    } catch {
      throw bad(index + 1, "not JSON");
    }
  };
  if (lines[0] === undefined || lines[0].trim() === "") throw new FlowError("configuration_invalid", `Cassette ${label} is empty.`);
  const header = parseLine(0);
  const headerProblem = checkHeader(header);
  if (headerProblem) throw bad(1, headerProblem);
  const entries: CassetteEntry[] = [];
  for (let index = 1; index < lines.length; index++) {
    if (lines[index]!.trim() === "") continue;
    const entry = parseLine(index);
    const problem = checkEntry(entry);
    if (problem) throw bad(index + 1, problem);
    entries.push(entry as CassetteEntry);
  }
  return { header: header as CassetteHeader, entries };
}

export function readCassette(path: string): Cassette {
  const text = readUserFile(path, { what: "The cassette", maxBytes: CASSETTE_MAX_BYTES, code: "configuration_invalid", missingCode: "harness_unavailable" });
  return parseCassette(text, path);
}

/** One cassette line. */
export function formatLine(value: CassetteHeader | CassetteEntry): string {
  return `${JSON.stringify(value)}\n`;
}
