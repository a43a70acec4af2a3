import { hostname } from "node:os";
import { resolve } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { loadCassette, type HarnessSettings } from "../harnesses/index.ts";
import { boolFlag, intFlag, listFlag, parseCommand, projectDir, stringFlag, TRUST_OPTIONS, trustOverride } from "./args.ts";
import { EXIT } from "./exit.ts";
import { WORKER_USAGE } from "./usage.ts";
import type { RemoteChildRequest } from "../backends/remote-child.ts";
import { MAX_WORKER_NAME_CHARS } from "../backends/names.ts";
import { printable } from "../runs/index.ts";
import { counted, oneLine } from "../ui/index.ts";

/** Text a child's request or answer brought from the database, as one safe line: anyone who can write there chose it. */
const shown = (text: string) => oneLine(printable(text));

const OPTIONS = {
  concurrency: { type: "string" },
  cwd: { type: "string" },
  replay: { type: "string" },
  "replay-mode": { type: "string" },
  stub: { type: "boolean" },
  seed: { type: "string" },
  extension: { type: "string", multiple: true },
  model: { type: "string" },
  name: { type: "string" },
  ...TRUST_OPTIONS,
} as const;

/** The most children one worker runs at once. */
const MAX_CONCURRENCY = 1024;

function harnessSettings(parsed: ReturnType<typeof parseCommand>): HarnessSettings {
  const replay = stringFlag(parsed, "replay");
  const stub = boolFlag(parsed, "stub");
  const seed = stringFlag(parsed, "seed");
  if (replay !== undefined && stub) throw new FlowError("request_invalid", "Give --stub or --replay, not both.");
  if (seed !== undefined && !stub) throw new FlowError("request_invalid", "--seed goes with --stub.");
  if (stub) {
    const value = Number(seed ?? "0");
    if (!/^\d+$/.test(seed ?? "0") || !Number.isSafeInteger(value)) throw new FlowError("request_invalid", "--seed must be a non-negative integer.");
    return { stub: { seed: value, every: true } };
  }
  if (replay === undefined) return {};
  const mode = stringFlag(parsed, "replay-mode") ?? "loose";
  if (mode !== "strict" && mode !== "loose") throw new FlowError("request_invalid", "--replay-mode must be strict or loose.");
  const cassette = resolve(replay);
  loadCassette(cassette, mode); // a cassette that cannot be read is refused now, not at the first child
  return { replay: { cassette, mode, every: true } };
}

function databaseUrl(): string {
  const url = process.env.PI_FLOW_DATABASE_URL;
  if (url === undefined || url === "") throw new FlowError("configuration_invalid", "flow worker needs PI_FLOW_DATABASE_URL: the Postgres database its coordinators use (see docs/scale.md).");
  return url;
}

/**
 * `--name`, or hostname-pid: one line of at most MAX_WORKER_NAME_CHARS characters, since it is the
 * worker's DBOS executor ID, which coordinators read back only that far, and it goes into every
 * child's evidence and every worker line.
 */
function workerName(parsed: ReturnType<typeof parseCommand>): string {
  const name = stringFlag(parsed, "name");
  if (name === undefined) return `${hostname()}-${process.pid}`;
  if (name.trim() === "" || [...name].length > MAX_WORKER_NAME_CHARS || shown(name) !== name) {
    throw new FlowError("request_invalid", `--name must be 1 to ${MAX_WORKER_NAME_CHARS} characters shown as they are on one line (no control characters, line breaks or runs of spaces); it is ${[...name].length} characters: ${shown(name).slice(0, 64)}`);
  }
  return name;
}

/** The sweep's interval bounds: a shorter one would query the database many times a second. */
const SWEEP_BOUNDS_MS = { min: 100, max: 60_000 } as const;

/**
 * `PI_FLOW_WORKER_SWEEP_MS`: how often the worker sweeps (takeovers of silent workers, children whose
 * end the database did not record, settled sessions); dbos-worker.ts's default when unset.
 */
function sweepInterval(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.PI_FLOW_WORKER_SWEEP_MS;
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < SWEEP_BOUNDS_MS.min || value > SWEEP_BOUNDS_MS.max) {
    throw new FlowError("configuration_invalid", `PI_FLOW_WORKER_SWEEP_MS must be a whole number of milliseconds from ${SWEEP_BOUNDS_MS.min} to ${SWEEP_BOUNDS_MS.max}; it is ${shown(raw)}.`);
  }
  return value;
}

/** Stops on the first SIGINT or SIGTERM; resolves with the signal's name. */
function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolveSignal) => {
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
    const onSignal = (signal: NodeJS.Signals) => {
      for (const name of signals) process.off(name, onSignal);
      resolveSignal(signal);
    };
    for (const name of signals) process.on(name, onSignal);
  });
}

/**
 * `flow worker`: takes agent() children from the dbos backend's queue and runs them on this
 * machine, at most --concurrency at once, until SIGINT or SIGTERM hands the unfinished ones back.
 * One line per child on stdout as it starts and as it settles.
 */
export async function workerCommand(argv: readonly string[]): Promise<number> {
  const parsed = parseCommand(argv, OPTIONS, { min: 0, max: 0 }, WORKER_USAGE);
  const cwd = projectDir(parsed);
  const concurrency = intFlag(parsed, "concurrency", 4, MAX_CONCURRENCY);
  const settings = harnessSettings(parsed);
  const name = workerName(parsed);
  const url = databaseUrl();
  const sweepMs = sweepInterval(process.env);
  // The fleet's credential stays with the worker: a child's bash (or an extension it loads) inherits
  // this process's environment, and with the URL could read every run and enqueue work for every worker.
  delete process.env.PI_FLOW_DATABASE_URL;
  const { resolveBackendSettings } = await import("../backends/settings.ts");
  resolveBackendSettings(undefined, { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: url }); // the URL's shape, before any connection, named as the user set it
  const [{ openHeadlessSession }, { commandProjectTrust }, { childFolderMissing, runRemoteChild }, { startWorker }, telemetry, { flushTelemetryBeforeExit, startTelemetry }] = await Promise.all([
    import("./headless.ts"),
    import("./trust.ts"),
    import("../backends/worker-children.ts"),
    import("../backends/dbos-worker.ts"),
    import("../telemetry/index.ts"),
    import("./telemetry.ts"),
  ]);
  await startTelemetry(); // configured tracing is loaded before the first child's span, and its headers out of the children's reach
  const projectTrusted = commandProjectTrust(trustOverride(parsed), cwd, "worker");
  const headless = await openHeadlessSession({ cwd, projectTrusted, extensions: listFlag(parsed, "extension") });
  try {
    const model = stringFlag(parsed, "model");
    if (model !== undefined) await headless.useModel(model);
    const trace = (request: RemoteChildRequest, harness: string) =>
      telemetry.traceWorkerChild({ ...request, worker: name, role: request.task.agent.replace(/^(role|agent):/, ""), description: request.task.description, harness });
    const onContinued = (request: RemoteChildRequest, note: string) => process.stdout.write(`continued ${shown(request.workflowId)} run ${shown(request.runId)}: ${shown(note)}\n`);
    const env = { cwd, agentDir: headless.agentDir, registry: headless.registry, settings, name, projectTrusted, trace, onContinued, ...(model !== undefined && headless.session.model ? { model: headless.session.model } : {}) };
    const stopped = stopSignal();
    let nameLost = () => {};
    const lostName = new Promise<"name taken">((resolve) => (nameLost = () => resolve("name taken")));
    const worker = await startWorker({
      databaseUrl: url,
      name,
      concurrency,
      ...(sweepMs !== undefined ? { sweepMs } : {}),
      run: (request, signal, steering, sessions) => runRemoteChild(request, env, signal, steering, sessions),
      onStarted: (request) => process.stdout.write(`started ${shown(request.workflowId)} run ${shown(request.runId)}\n`),
      folderMissing: (request) => childFolderMissing(request, env),
      onRefused: (request) =>
        process.stdout.write(`requeued ${shown(request.workflowId)} run ${shown(request.runId)}: its folder ${shown(request.cwd)} does not exist in this worker's project; another worker may have it\n`),
      onSettled: (request, answer) => process.stdout.write(`settled ${shown(request.workflowId)} run ${shown(request.runId)} ${shown(answer.result.outcome)}\n`),
      onFailed: (workflowId, runId, message) => process.stdout.write(`failed ${shown(workflowId)} run ${shown(runId)}: ${shown(message)}\n`),
      onSteered: (workflowId) => process.stdout.write(`steered ${shown(workflowId)}\n`),
      onSteersLost: (workflowId, messages, why) =>
        process.stdout.write(`steers not delivered to ${shown(workflowId)} (the database refused to keep them: ${shown(why)}): ${messages.map(shown).join(" | ")}\n`),
      onNameLost: () => nameLost(),
      onNameHeld: (seconds) => process.stderr.write(`flow worker: a worker named ${shown(name)} was heard from in the last ${seconds} s; waiting to see whether it is still running\n`),
      onTakeover: (ids) => process.stdout.write(`took over ${counted(ids.length, "unfinished child", "unfinished children")} of a silent worker: ${ids.map(shown).join(" ")}\n`),
      onOrphansCancelled: (ids, seconds) => process.stdout.write(`cancelled ${ids.map(shown).join(" ")}: the coordinator of each delegation has not been heard from in ${seconds} s (its Pi was killed or its machine lost), and nothing else reads its answer\n`),
      onRequeued: (ids) => process.stdout.write(`requeued ${ids.map(shown).join(" ")}: the database did not record their end; they run again from their saved step or session\n`),
    });
    process.stdout.write(`worker ${name} ready: up to ${counted(concurrency, "child", "children")} at once, project ${cwd}\n`);
    const signal = await Promise.race([stopped, lostName]); // a stop for a name taken fails, saying why
    const left = worker.running();
    telemetry.endHandedBack();
    await worker.stop();
    process.stdout.write(`worker ${name} stopped (${signal})${left > 0 ? `: ${counted(left, "unfinished child", "unfinished children")} handed back to the queue` : ""}\n`);
    return EXIT.succeeded;
  } finally {
    await headless.close();
    await flushTelemetryBeforeExit(); // the last children's spans leave before the process does
  }
}
