/** OpenTelemetry traces of runs: off unless configured by OTel's environment. See docs/observability.md. */
export { flushTelemetry, setTelemetryContent, telemetryProblems, telemetryReady, telemetryStatus, traceRun, traced, withholdCollectorHeaders, type TracedRun } from "./tracing.ts";
export type { RunTraceHooks } from "./run-trace.ts";
export { endHandedBack, runTraceparent, traceWorkerChild } from "./remote-trace.ts";
