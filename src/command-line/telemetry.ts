import { childEnvironment } from "../harnesses/index.ts";
import { flushTelemetry, telemetryProblems, telemetryReady, withholdCollectorHeaders } from "../telemetry/index.ts";

/** The CLI harnesses, whose children get the variables PI_FLOW_CLI_ENV and PI_FLOW_<HARNESS>_ENV name. */
const CLI_HARNESSES = ["claude", "codex"];

/** Whether the user gives `name` to claude or codex children (Claude Code exports its own telemetry with it): then children may have it. */
const givenToChildren = (name: string): boolean => CLI_HARNESSES.some((harness) => childEnvironment(harness, [], process.env)[name] !== undefined);

/**
 * Before `flow run` or `flow worker` starts a child: configured tracing is loaded (so the run's
 * first span has a tracer), and the collector's headers, which the exporter now holds, leave the
 * environment every child's bash inherits, unless the user passes them on to CLI children.
 */
export async function startTelemetry(): Promise<void> {
  await telemetryReady();
  withholdCollectorHeaders((name) => !givenToChildren(name));
}

/**
 * Before `flow run` exits: the run's spans are sent, and what went wrong with tracing (a dead
 * collector, an unsupported protocol) is said once on stderr. It never changes the exit code.
 */
export async function flushTelemetryBeforeExit(): Promise<void> {
  await flushTelemetry();
  for (const problem of telemetryProblems()) process.stderr.write(`flow: telemetry: ${problem}; the run is not affected.\n`);
}
