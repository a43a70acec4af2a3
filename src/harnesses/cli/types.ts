import type { ChildDiagnostic, ChildRequest, ChildUsage } from "../types.ts";

/** What pi-flow needs to know to find, check and explain one external CLI. */
export interface CliSpec {
  /** The harness name, as `harness` selects it. */
  name: string;
  /** The product, as messages name it. */
  product: string;
  /** The command looked up on PATH. */
  command: string;
  /** The environment variable that names the binary instead (a path, or a command on PATH). */
  binVariable: string;
  /** How a user installs it. */
  install: string;
  /** Matches the CLI's `--version` output (which proves it is this CLI) and captures x.y.z. */
  versionPattern: RegExp;
  /** The oldest version whose flags and stream format pi-flow relies on. */
  minVersion: string;
  /** The CLI's own non-secret configuration variables, passed to it without being configured. */
  ownEnv: readonly string[];
  /** A resume continues a copy of the session (claude's --fork-session), not the session itself. */
  forksOnResume: boolean;
}

export interface CliLaunchInput {
  request: ChildRequest;
  /** The CLI's own model name, or undefined for its default. */
  model: string | undefined;
  /** The role may only read: the CLI runs in its read-only permission mode. */
  readOnly: boolean;
  /** A private directory for files the launch needs (a schema file); removed after the run. */
  scratchDir: string;
  /** Continue this CLI session (its id as the run's `cli_session` diagnostic recorded it) instead of starting one. */
  resumeSessionId: string | undefined;
  /** The CLI's binary and the environment it runs with, for a command the launch runs first (codex's MCP server list). */
  binary: string;
  /** The CLI's version (x.y.z), as its preflight read it: a flag's name may depend on it. */
  version: string;
  env: NodeJS.ProcessEnv;
}

/** The command line and the text written to the child's stdin (the prompt, never in argv). */
export interface CliLaunch {
  args: string[];
  stdin: string;
  /** Where the CLI runs the child with less than its tools allow: said in its diagnostics. */
  narrowed?: { code: string; message: string };
}

/** Where a stream reader reports what it sees. */
export interface StreamSink {
  /** Totals so far; the reader updates them in place. */
  usage: ChildUsage;
  progress(activity: string): void;
  output(text: string): void;
  diagnostic(entry: ChildDiagnostic): void;
  session(sessionId: string): void;
}

/** The child's answer as the stream ended, before any outputSchema is applied. */
export type StreamAnswer =
  | { ok: true; text: string; structured?: { value: unknown } }
  | { ok: false; message: string };

/** Reads one run's events, in order. Throwing `StreamFormatError` fails the child. */
export interface StreamReader {
  onEvent(event: Record<string, unknown>): void;
  /** Whether the CLI's final event (claude's result, codex's turn end) has been read: all the run needs is in. */
  ended(): boolean;
  /** The stream ended (the process exited); `exitCode` is null when a signal (`signal`) ended it. */
  finish(exitCode: number | null, signal?: NodeJS.Signals | null): StreamAnswer;
}

export interface CliAdapter {
  spec: CliSpec;
  /** The command line; a CliLaunchError fails the child before the CLI starts. */
  launch(input: CliLaunchInput): CliLaunch | Promise<CliLaunch>;
  reader(sink: StreamSink): StreamReader;
}

/** Why a child could not be launched: its message fails the child. */
export class CliLaunchError extends Error {}

/** An event that does not have the shape the CLI's format documents. */
export class StreamFormatError extends Error {}
