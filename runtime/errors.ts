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

/** Lines the runner puts before the script body (see vm-session.ts wrapScript). */
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
export function mapStack(stack: string, filename: string, bodyLines: number): { stack: string; position?: SourcePosition } {
  let position: SourcePosition | undefined;
  const frames: string[] = [];
  for (const line of stack.split("\n")) {
    const match = FRAME.exec(line);
    if (!match) continue;
    const file = match[1] ?? match[4];
    const rawLine = Number(match[2] ?? match[5]);
    const sourceLine = rawLine - WRAPPER_LINES;
    if (file !== filename || sourceLine < 1 || sourceLine > bodyLines) continue;
    const column = Number(match[3] ?? match[6] ?? 1);
    position ??= { line: sourceLine, column };
    frames.push(line.slice(0, match.index) + line.slice(match.index).replace(`${file}:${rawLine}`, `${file}:${sourceLine}`));
  }
  return position ? { stack: frames.join("\n"), position } : { stack: frames.join("\n") };
}
