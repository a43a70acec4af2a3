// A failure from the run's worker, or a refusal the host raised for one call, as the WorkflowError
// the caller sees: fields bounded, and positions in stacks mapped back to the author's lines and
// columns (the wrapper line and the frame guard's catches removed, errors.ts).
import { mapStack, type ColumnShifts } from "./errors.ts";
import type { VmFailure } from "./protocol.ts";
import { capText, MAX_ERROR_MESSAGE_CHARS } from "./text.ts";
import type { WorkflowError } from "./types.ts";

/** The script as its stacks name it: its file name, its line count, the columns the guard moved. */
export interface ScriptPlace {
  filename: string;
  lines: number;
  shifts: ColumnShifts;
}

/** A refusal the host raised for one call: the line and column of the script's call, as its other errors have. */
export function locateRefusal(error: WorkflowError, at: string | undefined, script: ScriptPlace): WorkflowError {
  if (at === undefined) return error;
  const { position } = mapStack(at, script.filename, script.lines, script.shifts);
  return position ? { ...error, line: position.line, column: position.column } : error;
}

export function mapVmFailure(failure: VmFailure, script: ScriptPlace): WorkflowError {
  // The worker bounds these already; the host does not rely on it.
  const error: WorkflowError = { kind: failure.kind, message: capText(failure.message, MAX_ERROR_MESSAGE_CHARS) };
  if (failure.code !== undefined) error.code = failure.code;
  if (failure.runId !== undefined) error.runId = failure.runId;
  if (failure.kind === "sandbox") return error;
  if (failure.kind === "script") error.name = failure.name ?? "Error";
  if (failure.stack !== undefined) {
    const mapped = mapStack(failure.stack, script.filename, script.lines, script.shifts);
    if (failure.kind === "script") error.stack = mapped.stack ? `${error.name}: ${failure.message}\n${mapped.stack}` : `${error.name}: ${failure.message}`;
    if (mapped.position) {
      error.line = mapped.position.line;
      error.column = mapped.position.column;
    }
  }
  return error;
}
