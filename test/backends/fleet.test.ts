/**
 * The dbos backend with real processes: a Postgres cluster of the test's own, two `flow worker`s
 * and a `flow run` coordinator, all real child processes; the stub harness answers the children.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { flow, flowSandbox, journalOf, PROJECT_ROOT, runFileText, startFlow, type RunningFlow } from "../cli/support.ts";
import { startPostgres, type PostgresCluster } from "../support/postgres.ts";
import { jsonSpans, startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.ts";

const CHILDREN = 20;
const TRACE_HOOK = join(PROJECT_ROOT, "test", "fixtures", "fleet", "trace-imports.mjs");

const sandbox = flowSandbox();
const project = join(sandbox.root, "project");
mkdirSync(project);
const script = sandbox.file(
  "fanout.js",
  `export const apiVersion = 1;
export const meta = { name: "fanout", description: "Many small children", limits: { agentCalls: ${CHILDREN}, concurrency: ${CHILDREN} } };
const schema = { type: "object", properties: { n: { type: "integer", minimum: 0, maximum: 1000 } }, required: ["n"], additionalProperties: false };
const runs = await parallel(Array.from({ length: ${CHILDREN} }, (_, i) => () =>
  agent({ role: "explorer", description: "Part " + i, prompt: "Look at part " + i + ".", outputSchema: schema })), { concurrency: ${CHILDREN} });
return runs.map((run) => run.value.n);
`,
);

let pg: PostgresCluster;
let collector: OtlpReceiver;
const started: RunningFlow[] = [];
beforeAll(async () => {
  [pg, collector] = await Promise.all([startPostgres(), startOtlpReceiver()]);
});
afterAll(async () => {
  // A test that failed half-way leaves its workers: stop them before the cluster and the files go.
  for (const worker of started) if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
  await Promise.all(started.map((worker) => worker.done));
  await Promise.all([pg?.stop(), collector?.close()]);
  sandbox.dispose();
});

const withEnv = (extra: Record<string, string>) => ({ ...sandbox.env, ...extra });
/** The coordinator and the workers export their spans to one collector. */
const traced = () => ({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });

function startWorker(name: string, databaseUrl: string): RunningFlow {
  const worker = startFlow(["worker", "--stub", "--concurrency", "3", "--name", name, "--cwd", project], { env: withEnv({ PI_FLOW_DATABASE_URL: databaseUrl, ...traced() }) });
  started.push(worker);
  return worker;
}

/** `settled <workflowId> run <runId> <outcome>` lines a worker printed. */
const settledLines = (stdout: string) => stdout.split("\n").filter((line) => line.startsWith("settled "));

test("two workers racing onto a fresh database both come up, share a 20-child workflow, each child runs once, and the value is the local backend's", async () => {
  const databaseUrl = pg.urlFor("fleet_share");
  const workers = [startWorker("w1", databaseUrl), startWorker("w2", databaseUrl)];
  await Promise.all(workers.map((worker) => worker.stdoutText(/worker w\d ready/)));
  const help = await flow(["help"], { env: withEnv({ PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: databaseUrl }) });
  expect(help.stdout).toMatch(/^Workers: .*\bw[12] \(seen \d+s ago, up to 3 children, pi-flow@[\d.]+\), w[12] \(seen/m);

  const trace = join(sandbox.root, "dbos-trace.txt");
  const fleet = await flow(["run", script, "--stub", "--cwd", project], {
    env: withEnv({ PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: databaseUrl, NODE_OPTIONS: `--import=${TRACE_HOOK}`, FLOW_IMPORT_TRACE: trace, ...traced() }),
  });
  expect(fleet.stderr).toMatch(new RegExp(`succeeded in .*: ${CHILDREN} children, 0 failed`));
  expect(fleet.code).toBe(0);
  expect(readFileSync(trace, "utf8")).toContain("@dbos-inc/dbos-sdk");

  // The same workflow on the local backend: the same value, and the DBOS SDK never loaded.
  const localTrace = join(sandbox.root, "local-trace.txt");
  const local = await flow(["run", script, "--stub", "--cwd", project], { env: withEnv({ NODE_OPTIONS: `--import=${TRACE_HOOK}`, FLOW_IMPORT_TRACE: localTrace }) });
  expect(local.code).toBe(0);
  expect(JSON.parse(fleet.stdout)).toEqual(JSON.parse(local.stdout));
  expect(existsSync(localTrace)).toBe(false);

  for (const worker of workers) worker.child.kill("SIGTERM");
  const [first, second] = await Promise.all(workers.map((worker) => worker.done));
  expect(first!.code).toBe(0);
  expect(second!.code).toBe(0);
  expect(first!.stdout).toMatch(/worker w1 stopped \(SIGTERM\)/);
  const settled = [...settledLines(first!.stdout), ...settledLines(second!.stdout)];
  // Both workers took work, and every agent() call ran exactly once, somewhere.
  expect(settledLines(first!.stdout).length).toBeGreaterThan(0);
  expect(settledLines(second!.stdout).length).toBeGreaterThan(0);
  const ids = settled.map((line) => line.split(" ")[1]);
  expect(new Set(ids).size).toBe(CHILDREN);
  expect(ids).toHaveLength(CHILDREN);
  expect(settled.every((line) => line.endsWith(" succeeded"))).toBe(true);

  // Evidence from the coordinator: a child's run says which worker ran it.
  const runId = settled[0]!.split(" ")[3]!;
  const worker = settledLines(first!.stdout).includes(settled[0]!) ? "w1" : "w2";
  // (read from the run's files: test/fleet shows the same through flow runs show)
  expect(runFileText(sandbox, runId, "diagnostics.log")).toContain(`ran on worker ${worker}`);
  expect(journalOf(sandbox, runId)).toContainEqual(expect.objectContaining({ t: "event", name: "worker", data: { worker } }));

  // One trace across three processes: each worker's span of a child (sent before it exited on
  // SIGTERM) is under the coordinator's span of that child's run, under the workflow's span, and
  // names the worker that ran it.
  const spans = jsonSpans(collector.requests);
  expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
  const [root] = spans.filter((span) => span.attributes["pi_flow.kind"] === "workflow");
  const byRun = new Map(spans.filter((span) => span.name === "invoke_agent explorer").map((span) => [span.attributes["pi_flow.run_id"], span]));
  const onWorkers = spans.filter((span) => span.name === "worker explorer");
  expect(onWorkers).toHaveLength(CHILDREN);
  for (const span of onWorkers) {
    const child = byRun.get(span.attributes["pi_flow.run_id"])!;
    expect(span.parentSpanId).toBe(child.spanId);
    expect(child.parentSpanId).toBe(root!.spanId);
    const ranOn = settled.find((line) => line.endsWith(` run ${String(span.attributes["pi_flow.run_id"])} succeeded`))!;
    expect(span.attributes).toMatchObject({ "pi_flow.worker": settledLines(first!.stdout).includes(ranOn) ? "w1" : "w2", "pi_flow.outcome": "succeeded", "pi_flow.harness": "stub" });
  }
}, 300_000);

test("a database that cannot be reached is configuration_invalid before anything launches, and names no password", async () => {
  const closed = "postgres://postgres:hunter2@127.0.0.1:1/nowhere";
  const unreachable = await flow(["run", script, "--stub", "--cwd", project], { env: withEnv({ PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: closed }) });
  expect(unreachable.code).toBe(2);
  expect(unreachable.stderr).toMatch(/cannot use the database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/nowhere: .*ECONNREFUSED.*\(configuration_invalid\)/);
  expect(unreachable.stderr).not.toContain("hunter2");
  expect(unreachable.stderr).not.toMatch(/run wf_/);
  expect(unreachable.stdout).toBe("");
}, 120_000);
