import { flushTelemetry, telemetryProblems, telemetryReady, withholdCollectorHeaders } from "../telemetry/index.ts";

/**
 * Before `flow run` or `flow worker` starts a child: configured tracing is loaded (so the run's
 * first span has a tracer), and the collector's headers, which the exporter now holds, leave the
 * environment every child's bash inherits.
 */
export async function startTelemetry(): Promise<void> {
  await telemetryReady();
  withholdCollectorHeaders();
}

/**
 * Before `flow run` exits: the run's spans are sent, and what went wrong with tracing (a dead
 * collector, an unsupported protocol) is said once on stderr. It never changes the exit code.
 */
export async function flushTelemetryBeforeExit(): Promise<void> {
  await flushTelemetry();
  for (const problem of telemetryProblems()) process.stderr.write(`flow: telemetry: ${problem}; the run is not affected.\n`);
}
