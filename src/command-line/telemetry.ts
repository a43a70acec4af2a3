import { flushTelemetry, telemetryProblems } from "../telemetry/index.ts";

/**
 * Before `flow run` exits: the run's spans are sent, and what went wrong with tracing (a dead
 * collector, an unsupported protocol) is said once on stderr. It never changes the exit code.
 */
export async function flushTelemetryBeforeExit(): Promise<void> {
  await flushTelemetry();
  for (const problem of telemetryProblems()) process.stderr.write(`flow: telemetry: ${problem}; the run is not affected.\n`);
}
