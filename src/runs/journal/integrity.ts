import type { Integrity } from "../../contract/run-schema.ts";
import { errorCode, readEvidenceText } from "../fsio.ts";
import { JOURNAL_VERSION, isWellFormed, type JournalLine, type StartLine, type TerminalLine } from "./journal.ts";

/**
 * What a reader learns from a journal. `integrity` follows the contract:
 * - complete: a start line and a terminal line, and no bad line;
 * - incomplete: no terminal line yet, or the last line is torn: it has no newline, so its write
 *   never finished (whether or not its text happens to parse);
 * - damaged: a bad line (not the well-formed record expected at its position) with records after
 *   it, a record after the terminal line, or a line of another run. A bad last line has nothing
 *   after it: the journal just has no terminal line, which is incomplete;
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

/** The line as the record expected at position `i`, or why it is not that record. */
function checkLine(line: Record<string, unknown> | null, i: number): { ok: JournalLine } | { defect: string } {
  if (line === null || !isWellFormed(line) || line.v !== JOURNAL_VERSION) return { defect: "is not a well-formed journal line" };
  if (line.seq !== i) return { defect: `is out of sequence (seq ${String(line.seq)})` };
  if (i === 0 && line.t !== "start") return { defect: "is not a start line" };
  if (i > 0 && line.t === "start") return { defect: "is a second start line" };
  return { ok: line };
}

/** `onLine` sees each whole, well-formed line as it is checked, so a reader that needs them parses once. */
export function classifyJournalText(text: string, runId: string, onLine?: (line: JournalLine) => void): JournalReport {
  const segments = text.split("\n");
  // The segment after the last "\n" is empty for a clean file, or the torn remains of a write.
  const tail = segments.pop() ?? "";
  const lines = tail.length > 0 ? [...segments, tail] : segments;
  const report: JournalReport = { integrity: "incomplete", lines: 0, unreadable: false };

  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const torn = tail.length > 0 && i === lines.length - 1;
    const line = parse(lines[i] ?? "");
    // Only the last line torn is an unfinished write, even after the terminal line (the contract's rule).
    // After the terminal line too, whether or not its text happens to parse.
    if (torn && (line === null || report.terminal)) return { ...report, integrity: "incomplete", reason: `line ${n} is torn` };
    if (report.terminal) return { ...report, integrity: "damaged", reason: `line ${n} follows the terminal line` };
    if (i === 0 && line && line.t === "start" && line.v !== JOURNAL_VERSION) {
      return { ...report, integrity: "unknown", reason: `unsupported journal version ${String(line.v)}` };
    }
    if (line && typeof line.runId === "string" && line.runId !== runId) {
      return { ...report, integrity: "damaged", reason: `line ${n} belongs to run ${line.runId.slice(0, 40)}` };
    }
    // Text that parses was written whole, so if it is the wrong record the journal is wrong, torn or not.
    const checked = checkLine(line, i);
    if ("defect" in checked) {
      const last = i === lines.length - 1;
      return { ...report, integrity: last ? "incomplete" : "damaged", reason: `line ${n} ${checked.defect}${last ? " (the last line; no terminal line)" : ""}` };
    }
    if (torn) return { ...report, integrity: "incomplete", reason: `line ${n} is torn (no newline)` };
    report.lines++;
    onLine?.(checked.ok);
    if (checked.ok.t === "start") report.start = checked.ok;
    else if (checked.ok.t === "terminal") report.terminal = checked.ok;
  }

  if (!report.start) return { ...report, integrity: "incomplete", reason: "no start line yet" };
  if (!report.terminal) return { ...report, integrity: "incomplete", reason: "no terminal line" };
  return { ...report, integrity: "complete" };
}

export function classifyJournalFile(path: string, runId: string): JournalReport {
  let text: string;
  try {
    text = readEvidenceText(path);
  } catch (error) {
    const code = errorCode(error) ?? "error";
    return { integrity: "unknown", lines: 0, unreadable: true, reason: `journal not readable (${code})` };
  }
  return classifyJournalText(text, runId);
}
