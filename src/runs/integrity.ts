import { readFileSync } from "node:fs";
import type { Integrity } from "../contract/run-schema.ts";
import { errorCode } from "./fsio.ts";
import { JOURNAL_VERSION, isWellFormed, type StartLine, type TerminalLine } from "./journal.ts";

/**
 * What a reader learns from a journal. `integrity` follows the contract:
 * - complete: a start line and a terminal line, and no bad line;
 * - incomplete: no terminal line, or only the last line is torn (an unfinished write);
 * - damaged: a bad line with records after it, a record after the terminal line, or a line of another run;
 * - unknown: unsupported version, or the file could not be read (missing counts: nothing was read).
 * A run that is live is `incomplete` whatever its journal says; that is the view's job, not this one's.
 */
export interface JournalReport {
  integrity: Integrity;
  start?: StartLine;
  terminal?: TerminalLine;
  /** Complete, well-formed lines. */
  lines: number;
  reason?: string;
  /** The file could not be read at all (as opposed to read and found wanting). */
  unreadable: boolean;
}

function parse(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function classifyJournalText(text: string, runId: string): JournalReport {
  const segments = text.split("\n");
  // The segment after the last "\n" is empty for a clean file, or the torn remains of a write.
  const tail = segments.pop() ?? "";
  const lines = tail.length > 0 ? [...segments, tail] : segments;
  const report: JournalReport = { integrity: "incomplete", lines: 0, unreadable: false };
  let badAt = -1;

  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? "";
    if (badAt >= 0) {
      return { ...report, integrity: "damaged", reason: `bad line ${badAt + 1} is followed by more records` };
    }
    if (report.terminal) {
      return { ...report, integrity: "damaged", reason: `line ${i + 1} follows the terminal line` };
    }
    const line = parse(raw);
    if (i === 0 && line && line.t === "start" && line.v !== JOURNAL_VERSION) {
      return { ...report, integrity: "unknown", reason: `unsupported journal version ${String(line.v)}` };
    }
    if (line && typeof line.runId === "string" && line.runId !== runId) {
      return { ...report, integrity: "damaged", reason: `line ${i + 1} belongs to run ${line.runId.slice(0, 40)}` };
    }
    const wellFormed =
      line !== null &&
      isWellFormed(line) &&
      line.v === JOURNAL_VERSION &&
      line.seq === i &&
      (i === 0) === (line.t === "start") &&
      !(tail.length > 0 && i === lines.length - 1); // an unterminated last line is torn, even if it parses
    if (!wellFormed) {
      badAt = i;
      continue;
    }
    report.lines++;
    if (line.t === "start") report.start = line;
    else if (line.t === "terminal") report.terminal = line;
  }

  if (badAt >= 0) return { ...report, integrity: "incomplete", reason: `line ${badAt + 1} is torn` };
  if (!report.start) return { ...report, integrity: "incomplete", reason: "no start line yet" };
  if (!report.terminal) return { ...report, integrity: "incomplete", reason: "no terminal line" };
  return { ...report, integrity: "complete" };
}

export function classifyJournalFile(path: string, runId: string): JournalReport {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = errorCode(error) ?? "error";
    return { integrity: "unknown", lines: 0, unreadable: true, reason: `journal not readable (${code})` };
  }
  return classifyJournalText(text, runId);
}
