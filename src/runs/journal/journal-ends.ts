import { join } from "node:path";
import { readAt, readEvidenceText, withOpenFile } from "../fsio.ts";
import type { RunFiles } from "../home.ts";
import { isWellFormed, JOURNAL_VERSION, type StartLine, type TerminalLine } from "./journal.ts";

/**
 * The first and last lines of a journal, read without reading what lies between: the launch
 * details live in the start line and a small final value in the terminal line, and a workflow's
 * journal can hold thousands of lines in between. Each read grows its window until it holds a
 * whole line, so a long line costs its own length and no more.
 */
const FIRST_WINDOW = 16 * 1024;

/** The start line, if the journal's first line is a whole, well-formed start line of `runId`. */
export function readStartLine(path: string, runId: string): StartLine | undefined {
  const line = withOpenFile(path, (fd, { size }) => {
    for (let window = FIRST_WINDOW; ; window *= 4) {
      const text = readAt(fd, 0, Math.min(window, size)).toString("utf8");
      const end = text.indexOf("\n");
      if (end >= 0) return text.slice(0, end);
      if (window >= size) return undefined; // no newline yet: the start line is torn
    }
  });
  const parsed = line === undefined ? undefined : parseLine(line, runId);
  return parsed?.t === "start" ? parsed : undefined;
}

/** The terminal line, if the journal's last line is a whole, well-formed terminal line of `runId`. */
export function readTerminalLine(path: string, runId: string): TerminalLine | undefined {
  const line = withOpenFile(path, (fd, { size }) => {
    for (let window = FIRST_WINDOW; ; window *= 4) {
      const from = Math.max(0, size - window);
      const text = readAt(fd, from, size - from).toString("utf8"); // a character cut at `from` sits before a newline we skip
      if (!text.endsWith("\n")) return undefined; // the last write never finished
      const start = text.lastIndexOf("\n", text.length - 2);
      if (start >= 0) return text.slice(start + 1, -1);
      if (from === 0) return text.slice(0, -1); // a one-line journal
    }
  });
  const parsed = line === undefined ? undefined : parseLine(line, runId);
  return parsed?.t === "terminal" ? parsed : undefined;
}


export function parseLine(text: string, runId: string): StartLine | TerminalLine | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
    const line = value as Record<string, unknown>;
    if (!isWellFormed(line) || line.v !== JOURNAL_VERSION || line.runId !== runId) return undefined;
    return line.t === "start" || line.t === "terminal" ? line : undefined;
  } catch {
    return undefined;
  }
}

/** Where runs recorded before the launch details moved into the start line kept them. */
const EARLIER_LAUNCH_FILE = "launch.json";

/**
 * A run's private launch details: its start line's, or for a run recorded by an earlier pi-flow,
 * the launch.json beside its journal. Undefined when neither can be read.
 */
export function readLaunch(files: RunFiles, runId: string, start = readStartLine(files.journal, runId)): Record<string, unknown> | undefined {
  return start?.launch ?? readEarlierLaunch(files.dir);
}

/** The launch.json an earlier pi-flow kept beside the journal in run folder `dir`, if it can be read. */
export function readEarlierLaunch(dir: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(readEvidenceText(join(dir, EARLIER_LAUNCH_FILE)));
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
