/**
 * kill -9 at several points of a 30-child workflow: of a worker (each time a replacement starts and
 * takes its children over), and of the coordinator (each time `flow run --resume` goes on). The value
 * is the local backend's, no child starts twice beyond those running on a killed worker, and the
 * workflow's usage totals are the local run's. Real processes throughout: Postgres, `flow worker`s,
 * `flow run`, pi children answered by Pi's faux provider.
 */
import type { Usage } from "../../src/runs/index.ts";
import { expect, test } from "vitest";
import pg from "pg";
import { FAUX_EXTENSION, flow, journalOf, startedRunId, type FauxRule, type RunningFlow } from "../cli/support.ts";
import { fleetFixture } from "../support/fleet.ts";

const CHILDREN = 30;
const fleet = fleetFixture();
const { sandbox, project } = fleet;
// Even parts call a tool (a short command, so children are in flight when a worker dies; silent,
// since under load Pi's bash tool now and then returned a quick command's output as "(no output)")
// and then answer; odd parts answer at once. Each answer names its part, so the value shows
// every child's answer landed in its own place. "part 1." never matches "part 11.".
const rules: FauxRule[] = Array.from({ length: CHILDREN }, (_, i) =>
  i % 2 === 0
    ? { match: `Check part ${i}.`, tool: { name: "bash", arguments: { command: "sleep 0.3" } }, then: `checked ${i}` }
    : { match: `Answer part ${i}.`, answer: `answered ${i}` },
);
sandbox.fauxRules(rules);
const script = sandbox.file(
  "chaos.js",
  `export const apiVersion = 1;
export const meta = { name: "chaos", limits: { agentCalls: ${CHILDREN}, concurrency: 6 } };
const runs = await parallel(Array.from({ length: ${CHILDREN} }, (_, i) => () =>
  agent({ role: "worker", description: "Part " + i, prompt: (i % 2 === 0 ? "Check part " : "Answer part ") + i + ".", context: { mode: "none" } })), { concurrency: 6 });
const answers = runs.map((run) => run.value);
return { answers, checked: answers.filter((answer) => answer.startsWith("checked")).length };
`,
);
const MODEL = ["--model", "faux/faux-1", "--extension", FAUX_EXTENSION];

/**
 * The workflow's usage as a user compares it. The faux provider splits a prompt between cache reads
 * and writes by what its own process saw before, as a real provider's cache on another machine
 * would; the prompt tokens in all are what must not change.
 */
/**
 * A settled run's usage as its journal's terminal line holds it: the record is a cache the run store
 * rewrites later, so a coordinator killed just after a child settled can leave it stale.
 */
function usageOf(runId: string) {
  const terminal = journalOf(sandbox, runId).find((line) => line.t === "terminal") as { usage?: Usage } | undefined;
  return comparable(terminal?.usage ?? {});
}
const comparable = (usage: Usage) => ({
  turns: usage.turns ?? 0,
  toolCalls: usage.toolCalls ?? 0,
  outputTokens: usage.outputTokens ?? 0,
  promptTokens: (usage.inputTokens ?? 0) + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0),
});

/** The usage of every child a run's journal delivered (those it replayed too), from each child's own record. */
function childrenUsageOf(runId: string) {
  const total = { turns: 0, toolCalls: 0, outputTokens: 0, promptTokens: 0 };
  const children = journalOf(sandbox, runId).filter((line) => line.t === "child");
  for (const { childRunId } of children) {
    const usage = usageOf(String(childRunId));
    for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += usage[key];
  }
  return { children: children.length, ...total };
}

/**
 * Follows the workers' `started` and `settled` lines as they are written: the count of settled
 * children (a wait resolves on it) and, per worker, the children it has started and not settled.
 */
function fleetTally() {
  let settled = 0;
  const waiters: { count: number; resolve(): void }[] = [];
  const inFlight = new Map<RunningFlow, Set<string>>();
  return {
    watch(worker: RunningFlow) {
      const running = new Set<string>();
      inFlight.set(worker, running);
      let partial = "";
      worker.child.stdout!.on("data", (chunk: Buffer) => {
        const lines = (partial + chunk.toString("utf8")).split("\n");
        partial = lines.pop() ?? "";
        for (const [verb, id] of lines.map((line) => line.split(" "))) {
          if (verb === "started") running.add(id!);
          if (verb === "settled") (running.delete(id!), settled++);
        }
        for (const waiter of waiters.filter((candidate) => settled >= candidate.count)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      });
    },
    atLeast: (count: number) => new Promise<void>((resolve) => (settled >= count ? resolve() : waiters.push({ count, resolve }))),
    /** The worker running the most children now (the first one, when none runs any). */
    busiest: (workers: readonly RunningFlow[]) => workers.reduce((best, worker) => (inFlight.get(worker)!.size > inFlight.get(best)!.size ? worker : best)),
  };
}

const linesOf = (stdout: string, verb: "started" | "settled") =>
  stdout
    .split("\n")
    .filter((line) => line.startsWith(`${verb} `))
    .map((line) => line.split(" ")[1]!);

/**
 * How many times each agent() call was started, over all the workers' outputs: by its place in the
 * script (`agent/<i>`), since a resumed run's children carry the resumed run's ID.
 */
function startsPerChild(outputs: readonly string[]): Map<string, number> {
  const starts = new Map<string, number>();
  for (const id of outputs.flatMap((stdout) => linesOf(stdout, "started")).map(callOf)) starts.set(id, (starts.get(id) ?? 0) + 1);
  return starts;
}
const callOf = (workflowId: string) => workflowId.replace(/^.*\/(agent\/\d+)$/, "$1");

async function localRun() {
  const local = await flow(["run", script, "--cwd", project, ...MODEL], { env: sandbox.env });
  expect(local.code).toBe(0);
  const runId = startedRunId(local.stderr);
  const usage = usageOf(runId);
  expect(childrenUsageOf(runId)).toEqual({ children: CHILDREN, ...usage }); // a workflow's usage is its children's
  return { value: JSON.parse(local.stdout) as unknown, usage };
}

async function ageHeartbeat(url: string, worker: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("UPDATE pi_flow.workers SET seen_at = now() - interval '1 hour' WHERE name = $1", [worker]);
  } finally {
    await client.end();
  }
}

test("a worker killed with SIGKILL after 3, 12 and 25 children settled: each time a new worker takes its children over, and the value, the starts and the usage are the local run's", async () => {
  const expected = await localRun();
  const url = fleet.pg.urlFor("fleet_chaos_workers");
  const tally = fleetTally();
  const names = new Map<RunningFlow, string>();
  const startWorker = (name: string) => {
    const worker = fleet.startWorker(name, url, ["--concurrency", "2", ...MODEL]);
    tally.watch(worker);
    names.set(worker, name);
    return worker;
  };
  const live = [startWorker("c1"), startWorker("c2")];
  await Promise.all(live.map((worker) => worker.stdoutText(/ready/)));
  const coordinator = fleet.start(["run", script, "--cwd", project, ...MODEL], { PI_FLOW_DATABASE_URL: url, PI_FLOW_BACKEND: "dbos" });
  const runId = startedRunId(await coordinator.stderrLine(/^run wf_\S+ started/));

  const killed: string[] = [];
  const inFlightAtKill = new Set<string>();
  for (const [index, point] of [3, 12, 25].entries()) {
    await tally.atLeast(point);
    const victim = tally.busiest(live);
    live.splice(live.indexOf(victim), 1);
    victim.child.kill("SIGKILL");
    const { stdout } = await victim.done;
    killed.push(stdout);
    const settled = new Set(linesOf(stdout, "settled"));
    for (const id of linesOf(stdout, "started")) if (!settled.has(id)) inFlightAtKill.add(callOf(id));
    // The 20 s of heartbeat silence that marks a worker dead, passed at once: the next sweep of a
    // live worker puts the dead one's children back on the queue.
    await ageHeartbeat(url, names.get(victim)!);
    // Not waited for: the run goes on meanwhile, and the next kill may take the other worker.
    live.push(startWorker(`c${index + 3}`));
  }

  const result = await coordinator.done;
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toEqual(expected.value);
  for (const worker of live) worker.child.kill("SIGTERM");
  const outputs = [...killed, ...(await Promise.all(live.map((worker) => worker.done))).map((done) => done.stdout)];
  const starts = startsPerChild(outputs);
  expect(starts.size).toBe(CHILDREN);
  // Only a child that was running on a killed worker starts again (once per kill it lived through).
  const startedTooOften = [...starts].filter(([id, count]) => count > 1 && !inFlightAtKill.has(id));
  expect(startedTooOften).toEqual([]);
  expect(new Set(outputs.flatMap((stdout) => linesOf(stdout, "settled"))).size).toBe(CHILDREN);
  expect(usageOf(runId)).toEqual(expected.usage);
});

test("a coordinator killed with SIGKILL after 5 and after 20 children settled: flow run --resume of the newest run goes on each time, no child starts twice, and the value and the children's usage are the local run's", async () => {
  const expected = await localRun();
  const url = fleet.pg.urlFor("fleet_chaos_coordinator");
  const tally = fleetTally();
  const workers = ["k1", "k2"].map((name) => fleet.startWorker(name, url, ["--concurrency", "2", ...MODEL]));
  for (const worker of workers) tally.watch(worker);
  await Promise.all(workers.map((worker) => worker.stdoutText(/ready/)));
  const dbos = { PI_FLOW_DATABASE_URL: url, PI_FLOW_BACKEND: "dbos" };

  const first = fleet.start(["run", script, "--cwd", project, ...MODEL], dbos);
  const runId = startedRunId(await first.stderrLine(/^run wf_\S+ started/));
  await tally.atLeast(5);
  first.child.kill("SIGKILL");
  await first.done;

  const resumed = fleet.start(["run", "--resume", runId, "--cwd", project, ...MODEL], dbos);
  // A resumed run has an ID of its own: the next resume takes the newest run of the chain.
  const resumedId = startedRunId(await resumed.stderrLine(/^run wf_\S+ started/));
  await tally.atLeast(20);
  resumed.child.kill("SIGKILL");
  await resumed.done;

  const last = await flow(["run", "--resume", resumedId, "--cwd", project, ...MODEL], { env: fleet.env(dbos) });
  expect(last.code).toBe(0);
  expect(JSON.parse(last.stdout)).toEqual(expected.value);
  for (const worker of workers) worker.child.kill("SIGTERM");
  const outputs = (await Promise.all(workers.map((worker) => worker.done))).map((done) => done.stdout);
  // The workers lived throughout: every child started exactly once, whatever became of its coordinator.
  const starts = startsPerChild(outputs);
  expect(starts.size).toBe(CHILDREN);
  expect([...starts.values()].every((count) => count === 1)).toBe(true);
  // Every child's usage counted once over the chain, whichever coordinator received its answer.
  // (Each run of the chain counts only what it spent, and a killed one never wrote its total.)
  expect(childrenUsageOf(startedRunId(last.stderr))).toEqual({ children: CHILDREN, ...expected.usage });
});
