// Error shapes: the parse-time `script_invalid` error, and mapping QuickJS stacks back to the
// author's source (the runner adds exactly one wrapper line before the body).

export class WorkflowScriptError extends Error {
  readonly code = "script_invalid";
  /** 1-based line in the workflow source. */
  readonly line: number;
  /** 1-based column in the workflow source. */
  readonly column: number;
  readonly path: string | undefined;
  /** A syntax error's: the whole text of the line it is on, for a caller to quote (redacted, cut). */
  readonly lineText: string | undefined;
  constructor(message: string, line: number, column: number, path?: string, lineText?: string) {
    super(message);
    this.name = "WorkflowScriptError";
    this.line = line;
    this.column = column;
    this.path = path;
    this.lineText = lineText;
  }
}

export function isWorkflowScriptError(error: unknown): error is WorkflowScriptError {
  return error instanceof WorkflowScriptError;
}

/** Text the runner inserted before 0-based `column` of a line of the body (frame-guard.ts). */
export interface Insertion {
  column: number;
  length: number;
}

/** Insertions by 1-based line of the body, in column order. */
export type ColumnShifts = ReadonlyMap<number, readonly Insertion[]>;

/**
 * A 1-based column of a line the runner added text to (frame-guard.ts) back in the author's line:
 * each insertion before it moves it right; one inside inserted text is where that text went.
 */
function sourceColumn(column: number, insertions: readonly Insertion[]): number {
  let shift = 0;
  for (const { column: at, length } of insertions) {
    const start = at + shift + 1; // 1-based column where the inserted text begins
    if (column < start) break;
    if (column < start + length) return at + 1;
    shift += length;
  }
  return column - shift;
}

/** Lines the runner puts before the script body (see vm-script.ts wrapScript). */
export const WRAPPER_LINES = 1;

export interface SourcePosition {
  line: number;
  column: number;
}

const FRAME = /\(([^()\s]+?):(\d+)(?::(\d+))?\)\s*$|at ([^()\s]+?):(\d+)(?::(\d+))?\s*$/;

/**
 * Keeps only the frames of the author's script, moved from the wrapped code to source positions,
 * and returns the first one: where the error was thrown, or where the script called the helper
 * that threw. Prelude and wrapper frames are runtime internals and are dropped.
 */
export function mapStack(stack: string, filename: string, bodyLines: number, shifts: ColumnShifts = new Map()): { stack: string; position?: SourcePosition } {
  let position: SourcePosition | undefined;
  const frames: string[] = [];
  for (const line of stack.split("\n")) {
    const match = FRAME.exec(line);
    if (!match) continue;
    const file = match[1] ?? match[4];
    const rawLine = Number(match[2] ?? match[5]);
    const sourceLine = rawLine - WRAPPER_LINES;
    if (file !== filename || sourceLine < 1 || sourceLine > bodyLines) continue;
    const rawColumn = match[3] ?? match[6];
    const column = rawColumn === undefined ? 1 : sourceColumn(Number(rawColumn), shifts.get(sourceLine) ?? []);
    position ??= { line: sourceLine, column };
    const where = rawColumn === undefined ? `${file}:${rawLine}` : `${file}:${rawLine}:${rawColumn}`;
    const mapped = rawColumn === undefined ? `${file}:${sourceLine}` : `${file}:${sourceLine}:${column}`;
    frames.push(line.slice(0, match.index) + line.slice(match.index).replace(where, mapped));
  }
  return position ? { stack: frames.join("\n"), position } : { stack: frames.join("\n") };
}
