/**
 * Fleet benchmark (issue 25): the dbos backend against the local one on this machine, with a
 * Postgres of its own (test/support/postgres.ts) and real `flow worker` processes.
 *
 * 1. Coordinator CPU per child: one workflow of N stub children, coordinated in this process, on
 *    the local backend and on the dbos backend over two workers; what the dbos backend adds per
 *    child (target ≤ 5 ms), and the wall ratio of the two.
 * 2. Scaling: a workflow of N children that each take BENCH_CHILD_MS (a pi child whose faux model
 *    answers after that long: waiting, as on a model, not computing) over 1, 2 and 4 workers of
 *    4 slots each; the wall time of 4 workers against 1 (target ≤ 0.3x).
 *
 *   npm run bench:fleet                          1,000 children (the issue's size)
 *   BENCH_CHILDREN=100 npm run bench:fleet        a quick look
 *   BENCH_PHASES=cpu  (or scale)                  one of the two parts only
 *   BENCH_CHILD_MS=500                            each scaling child's time (default 2000: a child that waits on its model dominates its own cost, as a real one does)
 *
 * Absolute times do not hold on a shared machine; the per-child CPU and the ratios are the figures.
 */
import { join } from "node:path";
import { closeFleets } from "../src/backends/index.ts";
import { flowInProcess } from "../test/cli/in-process.ts";
import { flowSandbox, PROJECT_ROOT, startFlow, type RunningFlow } from "../test/cli/support.ts";
import { startPostgres } from "../test/support/postgres.ts";

const CHILDREN = Number(process.env.BENCH_CHILDREN ?? "1000");
const CHILD_MS = Number(process.env.BENCH_CHILD_MS ?? "2000");
const SLOTS_PER_WORKER = 4;
const PHASES = new Set((process.env.BENCH_PHASES ?? "cpu,scale").split(","));
const SLOW_MODEL = ["--model", "faux/faux-1", "--extension", join(PROJECT_ROOT, "bench", "fleet-model.ts")];

const sandbox = flowSandbox();
const project = sandbox.root;
const fanout = (n: number, concurrency: number) =>
  sandbox.file(
    `fanout-${n}-${concurrency}.js`,
    `export const apiVersion = 1;
export const meta = { name: "fanout-${n}-${concurrency}", description: "Children side by side", limits: { agentCalls: ${n}, concurrency: ${concurrency} } };
const runs = await parallel(Array.from({ length: ${n} }, (_, i) => () =>
  agent({ role: "explorer", description: "Part " + i, prompt: "Look at part " + i + ".", context: { mode: "none" } })), { concurrency: ${concurrency} });
return runs.length;
`,
  );

const pg = await startPostgres();
const workers: RunningFlow[] = [];

async function startWorkers(count: number, databaseUrl: string, args: readonly string[]): Promise<RunningFlow[]> {
  const started = Array.from({ length: count }, (_, i) =>
    startFlow(["worker", "--name", `b${workers.length + i + 1}`, "--cwd", project, ...args], { env: { ...sandbox.env, PI_FLOW_DATABASE_URL: databaseUrl, BENCH_CHILD_MS: String(CHILD_MS) } }),
  );
  workers.push(...started);
  await Promise.all(started.map((worker) => worker.stdoutText(/ready/)));
  return started;
}

async function stopWorkers(some: readonly RunningFlow[]): Promise<void> {
  for (const worker of some) worker.child.kill("SIGTERM");
  await Promise.all(some.map((worker) => worker.done));
}

/** One `flow run` in this process: its wall time and this process's CPU meanwhile, in ms. */
async function coordinate(args: readonly string[], env: Record<string, string>): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = await flowInProcess(["run", ...args, "--cwd", project], { env: { ...sandbox.env, ...env } });
  const wall = performance.now() - start;
  if (result.code !== 0) throw new Error(`flow run ${args.join(" ")} failed (${result.code}): ${result.stderr.slice(-2000)}`);
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

function line(name: string, value: string, target: string, ok: boolean): void {
  console.log(`${name.padEnd(52)} ${value.padStart(22)}  (target ${target}) ${ok ? "ok" : "MISS"}`);
}

try {
  console.log(`fleet benchmark: ${CHILDREN} children; scaling children take ${CHILD_MS} ms; ${SLOTS_PER_WORKER} slots per worker\n`);

  if (PHASES.has("cpu")) {
    // 1. Coordinator CPU per child. A small run first on each backend loads what a first run loads.
    const cpuDb = pg.urlFor("bench_cpu");
    const dbos = { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: cpuDb };
    const stubWorkers = await startWorkers(2, cpuDb, ["--stub", "--concurrency", "16"]);
    const big = fanout(CHILDREN, 32);
    await coordinate([fanout(4, 4), "--stub"], {});
    await coordinate([fanout(4, 4), "--stub"], dbos);
    const local = await coordinate([big, "--stub"], {});
    const fleet = await coordinate([big, "--stub"], dbos);
    await stopWorkers(stubWorkers);
    const added = (fleet.cpu - local.cpu) / CHILDREN;
    console.log(`local backend: wall ${(local.wall / 1000).toFixed(1)} s, coordinator CPU ${(local.cpu / CHILDREN).toFixed(2)} ms per child`);
    console.log(`dbos backend, 2 workers: wall ${(fleet.wall / 1000).toFixed(1)} s, coordinator CPU ${(fleet.cpu / CHILDREN).toFixed(2)} ms per child`);
    line("coordinator CPU the dbos backend adds per child", `${added.toFixed(2)} ms`, "≤ 5 ms", added <= 5);
    console.log(`${"wall, dbos over 2 workers / local".padEnd(52)} ${`${(fleet.wall / local.wall).toFixed(2)}x`.padStart(22)}  (stub children: no work to spread; for information)\n`);
  }

  if (PHASES.has("scale")) {
    // 2. Wall time as workers go 1 → 2 → 4, children that take a fixed time.
    const walls = new Map<number, number>();
    const slow = fanout(CHILDREN, 32);
    for (const count of [1, 2, 4]) {
      const databaseUrl = pg.urlFor(`bench_scale_${count}`);
      const some = await startWorkers(count, databaseUrl, ["--concurrency", String(SLOTS_PER_WORKER), ...SLOW_MODEL]);
      const { wall } = await coordinate([slow, ...SLOW_MODEL], { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: databaseUrl, BENCH_CHILD_MS: String(CHILD_MS) });
      await stopWorkers(some);
      walls.set(count, wall);
      const ideal = (CHILDREN * CHILD_MS) / (count * SLOTS_PER_WORKER) / 1000;
      console.log(`${`${count} worker${count === 1 ? "" : "s"}`.padEnd(10)} wall ${(wall / 1000).toFixed(1).padStart(6)} s  ${((CHILDREN / wall) * 1000).toFixed(1).padStart(6)} children/s  (children's own time alone: ${ideal.toFixed(1)} s)`);
    }
    const ratio = walls.get(4)! / walls.get(1)!;
    line("wall, 4 workers / 1 worker", `${ratio.toFixed(2)}x`, "≤ 0.3x", ratio <= 0.3);
    line("wall, 2 workers / 1 worker", `${(walls.get(2)! / walls.get(1)!).toFixed(2)}x`, "≈ 0.5x", walls.get(2)! / walls.get(1)! <= 0.6);
  }
} finally {
  await stopWorkers(workers.filter((worker) => worker.child.exitCode === null && worker.child.signalCode === null));
  await closeFleets();
  await pg.stop();
  sandbox.dispose();
}
