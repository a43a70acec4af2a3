import type { ChildRequest } from "./types.ts";

/** How much of a child's text and diagnostics its run's logs keep; the answer itself is never cut. */
export interface LogLimits {
  maxOutputBytes: number;
  maxDiagnosticsBytes: number;
}

/** Every harness's bounds by default: a pi child's and a CLI child's (cli-harness.ts). */
export const CHILD_LOG_LIMITS: LogLimits = { maxOutputBytes: 16 * 1024 * 1024, maxDiagnosticsBytes: 16 * 1024 * 1024 };

/**
 * The request with its output and diagnostics logs bounded: a model that writes or calls tools
 * without end (no quota, no time limit) would otherwise grow the run's logs on disk without end.
 * Past a bound, one diagnostic says where that log stops (naming `writer`), and nothing more is
 * written to it.
 */
export function withBoundedLogs(request: ChildRequest, limits: LogLimits, writer = "the child"): ChildRequest {
  let outputBytes = 0;
  let diagnosticsBytes = 0;
  return {
    ...request,
    onOutput: (text) => {
      if (outputBytes > limits.maxOutputBytes) return;
      outputBytes += Buffer.byteLength(text, "utf8");
      if (outputBytes <= limits.maxOutputBytes) request.onOutput(text);
      else request.onDiagnostic({ type: "error", message: `The output log stops here: ${writer} wrote more than ${limits.maxOutputBytes} bytes of text.` });
    },
    onDiagnostic: (entry) => {
      if (diagnosticsBytes > limits.maxDiagnosticsBytes) return;
      diagnosticsBytes += Buffer.byteLength(JSON.stringify(entry), "utf8");
      if (diagnosticsBytes <= limits.maxDiagnosticsBytes) request.onDiagnostic(entry);
      else request.onDiagnostic({ type: "error", message: `The diagnostics log stops here: ${writer} reported more than ${limits.maxDiagnosticsBytes} bytes of tool calls, results and errors.` });
    },
  };
}
