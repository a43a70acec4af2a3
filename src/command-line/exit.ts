import { FlowError } from "../contract/errors.ts";
import { printable } from "../runs/index.ts";

/** The `flow` command's exit codes (docs/cli.md). */
export const EXIT = {
  succeeded: 0,
  /** The run failed or timed out, or something unexpected went wrong. */
  failed: 1,
  /** The input was refused before anything launched. */
  refused: 2,
  /** The workflow succeeded, but part of its evidence could not be saved (evidence_incomplete). */
  evidenceIncomplete: 3,
  /** Ctrl-C: the run was cancelled. 128 + SIGINT, as shells report it. */
  interrupted: 130,
} as const;

/** Error codes that mean the input was refused before launch (for flow runs: no such run): exit 2. */
export const REFUSED_CODES: ReadonlySet<string> = new Set([
  "run_unavailable",
  "script_invalid",
  "request_invalid",
  "selection_invalid",
  "configuration_invalid",
  "harness_unavailable",
  "model_unavailable",
]);

export function exitCodeFor(code: string): number {
  return REFUSED_CODES.has(code) ? EXIT.refused : EXIT.failed;
}

/**
 * Writes one `flow: …` error line. Its text may come from a cassette, a child or a tool: redacted
 * and stripped of escape sequences, it can neither leak a secret nor drive the terminal.
 */
export function writeErrorLine(text: string): void {
  process.stderr.write(`flow: ${printable(text)}\n`);
}

/**
 * `message (code)`. A script_invalid message's later lines are a syntax error's quoted line and
 * caret, or further problems: the code ends its first line, so the caret is not followed by it.
 */
export function withCode(message: string, code: string): string {
  const end = code === "script_invalid" ? message.indexOf("\n") : -1;
  return end === -1 ? `${message} (${code})` : `${message.slice(0, end)} (${code})${message.slice(end)}`;
}

/** Prints an error the way every subcommand does, and says which exit code it means. */
export function reportError(error: unknown): number {
  if (error instanceof FlowError) {
    writeErrorLine(withCode(error.message, error.code));
    return exitCodeFor(error.code);
  }
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  writeErrorLine(`unexpected error: ${message}`);
  return EXIT.failed;
}

/** Resolves once everything written to stdout and stderr so far has been handed to the OS. */
export function flushed(): Promise<void> {
  const drain = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write("", () => resolve()));
  return Promise.all([drain(process.stdout), drain(process.stderr)]).then(() => undefined);
}
