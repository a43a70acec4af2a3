/**
 * The dbos backend with real processes: a Postgres cluster of the test's own, two `flow worker`s
 * and a `flow run` coordinator, all real child processes; the stub harness answers the children.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, expect, onTestFinished, test } from "vitest";
import { ensureWorkersTable } from "../../src/backends/heartbeats.ts";
import type { RunView } from "../../src/contract/run-schema.ts";
import { flow, journalOf, PROJECT_ROOT, runFileText, type RunningFlow } from "../cli/support.ts";
import { childRequest, fleetFixture } from "../support/fleet.ts";
import { dbosCoordinator } from "../../src/backends/dbos-coordinator.ts";
import { jsonSpans, startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.ts";
import { startPiSession } from "../support/pi-session.ts";

const CHILDREN = 12;
const TRACE_HOOK = join(PROJECT_ROOT, "test", "fixtures", "fleet", "trace-imports.mjs");

const fleet = fleetFixture();
const { sandbox, project } = fleet;
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

let collector: OtlpReceiver;
beforeAll(async () => {
  collector = await startOtlpReceiver();
});
afterAll(async () => {
  await collector?.close();
});

const withEnv = fleet.env;
/** The coordinator and the workers export their spans to one collector. */
const traced = () => ({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
const startWorker = (name: string, databaseUrl: string, cwd = project): RunningFlow =>
  fleet.start(["worker", "--stub", "--concurrency", "3", "--name", name, "--cwd", cwd], { PI_FLOW_DATABASE_URL: databaseUrl, ...traced() });

/** `settled <workflowId> run <runId> <outcome>` lines a worker printed. */
const settledLines = (stdout: string) => stdout.split("\n").filter((line) => line.startsWith("settled "));

test("two workers racing onto a fresh database both come up, share a 12-child workflow, each child runs once, and the value is the local backend's", async () => {
  const databaseUrl = fleet.pg.urlFor("fleet_share");
  const workers = [startWorker("w1", databaseUrl), startWorker("w2", databaseUrl)];
  await Promise.all(workers.map((worker) => worker.stdoutText(/worker w\d ready/)));
  const help = await flow(["help"], { env: withEnv({ PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: databaseUrl }) });
  expect(help.stdout).toMatch(/^Workers: .*\bw[12] \(seen \d+s ago, up to 3 children, pi-flow@[\d.]+\), w[12] \(seen/m);

  const trace = join(sandbox.root, "dbos-trace.txt");
  const onFleet = await flow(["run", script, "--stub", "--cwd", project], {
    env: withEnv({ PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: databaseUrl, NODE_OPTIONS: `--import=${TRACE_HOOK}`, FLOW_IMPORT_TRACE: trace, ...traced() }),
  });
  expect(onFleet.stderr).toMatch(new RegExp(`succeeded in .*: ${CHILDREN} children, 0 failed`));
  expect(onFleet.code).toBe(0);
  expect(readFileSync(trace, "utf8")).toContain("@dbos-inc/dbos-sdk");
  // The children's requests (their prompts, not redacted: the workers ran them) went once read.
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    expect((await db.query("SELECT w.workflow_uuid, i.inputs FROM dbos.workflow_status w JOIN dbos.workflow_input i USING (workflow_uuid)")).rows).toEqual([]);
    expect((await db.query("SELECT count(*)::int AS n FROM dbos.workflow_status WHERE status = 'SUCCESS'")).rows).toEqual([{ n: CHILDREN }]);
  } finally {
    await db.end();
  }

  // The same workflow on the local backend: the same value, and the DBOS SDK never loaded.
  const localTrace = join(sandbox.root, "local-trace.txt");
  const local = await flow(["run", script, "--stub", "--cwd", project], { env: withEnv({ NODE_OPTIONS: `--import=${TRACE_HOOK}`, FLOW_IMPORT_TRACE: localTrace }) });
  expect(local.code).toBe(0);
  expect(JSON.parse(onFleet.stdout)).toEqual(JSON.parse(local.stdout));
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
  // The workers' stderr says why, when their spans did not come (a failed export is said there).
  expect(onWorkers, `worker w1: ${first!.stderr}\nworker w2: ${second!.stderr}\nspan names: ${spans.map((span) => span.name).join(", ")}`).toHaveLength(CHILDREN);
  for (const span of onWorkers) {
    const child = byRun.get(span.attributes["pi_flow.run_id"])!;
    expect(span.parentSpanId).toBe(child.spanId);
    expect(child.parentSpanId).toBe(root!.spanId);
    const ranOn = settled.find((line) => line.endsWith(` run ${String(span.attributes["pi_flow.run_id"])} succeeded`))!;
    expect(span.attributes).toMatchObject({ "pi_flow.worker": settledLines(first!.stdout).includes(ranOn) ? "w1" : "w2", "pi_flow.outcome": "succeeded", "pi_flow.harness": "stub" });
    // The worker's span belongs to the same line of work as the coordinator's: the workflow's.
    expect(span.attributes["pi_flow.correlation_id"]).toBe(root!.attributes["pi_flow.run_id"]);
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
}, 300_000);

test("a child no worker has taken is queued in external_runs and in the receipt's progress; a worker that starts takes it, and it settles", async () => {
  const databaseUrl = fleet.pg.urlFor("fleet_queued");
  const pi = await startPiSession({ env: { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: databaseUrl } });
  onTestFinished(() => pi.dispose());
  const agentCall = (description: string) => `agent({ role: "explorer", description: "${description}", prompt: "Look.", context: { mode: "none" } })`;
  const runs = async (): Promise<RunView[]> => ((await pi.callTool("external_runs", { action: "list" })).structuredContent as { data: { runs: RunView[] } }).data.runs;

  // A background workflow whose child waits: no worker runs yet.
  const accepted = await pi.callTool("external_workflow", { script: `return (await ${agentCall("First part")}).value;`, background: true });
  const rootId = (accepted.structuredContent as { data: { run: RunView } }).data.run.runId;
  let child: RunView | undefined;
  // The script starts in its sandbox meanwhile; each look gives it a moment.
  while (!child) child = await sleep(50).then(async () => (await runs()).find((run) => run.task.parentRunId === rootId));
  expect(child.state.status).toBe("queued");
  const inspected = await pi.callTool("external_runs", { action: "inspect", runIds: [child.runId] });
  expect(inspected.text).toMatch(/^\s*status: queued; live: yes/m);

  // A foreground workflow's progress says its child is queued; a worker that starts then takes both.
  const updates: string[] = [];
  let sawQueued!: () => void;
  const queued = new Promise<void>((resolve) => (sawQueued = resolve));
  pi.session.subscribe((event) => {
    if (event.type !== "tool_execution_update" || event.toolName !== "external_workflow") return;
    const text = ((event.partialResult as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("");
    updates.push(text);
    if (text.includes("1 queued, 0 running, 0 finished: Second part (queued)")) sawQueued();
  });
  const second = pi.callTool("external_workflow", { script: `return (await ${agentCall("Second part")}).value;` });
  await queued;
  const worker = startWorker("q1", databaseUrl, pi.cwd);
  const receipt = await second;
  expect(receipt.isError).toBe(false);
  // Queued from the first report that lists it, running once the worker took it.
  const mentions = updates.filter((text) => text.includes("Second part ("));
  expect(mentions[0]).toContain("Second part (queued)");
  expect(mentions.findIndex((text) => text.includes("Second part (running)"))).toBeGreaterThan(0);

  // /flow doctor names the backend and the worker the database has heard from.
  await pi.session.prompt("/flow doctor");
  const printed = pi.session.sessionManager.getEntries().filter((entry) => entry.type === "custom" && entry.customType === "pi-flow-output").at(-1) as { data: { lines: string[] } };
  expect(printed.data.lines).toContain(`backend  dbos on ${databaseUrl} (children run on flow workers)`);
  expect(printed.data.lines).toContainEqual(expect.stringMatching(/^workers {2}q1 \(seen \d+s ago, up to 3 children, pi-flow@/));

  await pi.callTool("external_runs", { action: "wait", runIds: [rootId] });
  const settled = (await runs()).find((run) => run.runId === child.runId)!;
  expect(settled.state).toMatchObject({ status: "done", outcome: "succeeded" });
  worker.child.kill("SIGTERM");
  expect((await worker.done).stdout).toMatch(new RegExp(`settled ${rootId}/agent/0 run ${child.runId} succeeded`));
}, 300_000);

test("a database another pi-flow version is using is configuration_invalid for a coordinator and a worker, naming that version, its workers and what to do", async () => {
  const databaseUrl = fleet.pg.urlFor("fleet_versions");
  // A worker of an older pi-flow, alive: its heartbeat row, as that version writes it.
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: fleet.pg.urlFor("postgres") });
  await admin.connect();
  await admin.query("CREATE DATABASE fleet_versions");
  await admin.end();
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  await ensureWorkersTable(db);
  await db.query("INSERT INTO pi_flow.workers (name, version, concurrency) VALUES ('old1', 'pi-flow@0.0.1', 4)");
  // It beats as a live worker does: a slow start here (a busy machine) must not outlast its 20 s of silence.
  const beating = setInterval(() => void db.query("UPDATE pi_flow.workers SET seen_at = now() WHERE name = 'old1'").catch(() => undefined), 2000);
  onTestFinished(() => clearInterval(beating));

  const refused = /is in use by pi-flow@0\.0\.1 \(worker old1\); this is pi-flow@[\d.]+, and a fleet runs one pi-flow version: .*Run pi-flow@[\d.]+ on every machine .*\(configuration_invalid\)/;
  const [coordinator, worker] = await Promise.all([
    flow(["run", script, "--stub", "--cwd", project], { env: withEnv({ PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: databaseUrl }) }),
    startWorker("new1", databaseUrl).done,
  ]);
  expect(coordinator.code).toBe(2);
  expect(coordinator.stderr).toMatch(refused);
  expect(coordinator.stderr).not.toMatch(/run wf_/);
  expect(worker.code).toBe(2);
  expect(worker.stderr).toMatch(refused);
  expect(worker.stdout).not.toContain("ready");
}, 300_000);

test("a coordinator that opened its database before a worker of another pi-flow version came refuses its next child configuration_invalid, instead of queueing it where no worker takes it", async () => {
  const databaseUrl = fleet.pg.urlFor("fleet_versions_late");
  const coordinator = dbosCoordinator(databaseUrl);
  onTestFinished(() => coordinator.close());
  await coordinator.ready(); // opened (migrated, versions checked) while no one else used the database
  const { default: pg } = await import("pg");
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  // The fleet was upgraded meanwhile: a worker of a newer pi-flow is alive, none of this one's.
  await db.query("INSERT INTO pi_flow.workers (name, version, concurrency) VALUES ('new9', 'pi-flow@99.0.0', 4)");
  await expect(coordinator.run(childRequest("late"), new AbortController().signal, () => undefined)).rejects.toMatchObject({
    code: "configuration_invalid",
    message: expect.stringMatching(/is in use by pi-flow@99\.0\.0 \(worker new9\); this is pi-flow@[\d.]+, and a fleet runs one pi-flow version/),
  });
  expect((await db.query("SELECT count(*)::int AS n FROM dbos.workflow_status")).rows).toEqual([{ n: 0 }]);
}, 30_000);

test("external_runs steer reaches a pi child running on a worker, through the database, with the usual receipt", async () => {
  const databaseUrl = fleet.pg.urlFor("fleet_steer");
  const pi = await startPiSession({ env: { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: databaseUrl } });
  onTestFinished(() => pi.dispose());
  const release = join(sandbox.root, "steer-release");
  const model = ["--model", "faux/faux-1", "--extension", join(PROJECT_ROOT, "test", "fixtures", "fleet", "steer-model.ts")];
  const worker = fleet.start(["worker", "--name", "s1", "--concurrency", "1", "--cwd", pi.cwd, ...model], { PI_FLOW_DATABASE_URL: databaseUrl, FLOW_STEER_RELEASE: release });
  await worker.stdoutText(/worker s1 ready/);

  const script = 'return (await agent({ role: "worker", description: "Steered part", prompt: "Do the part.", context: { mode: "none" } })).value;';
  const accepted = await pi.callTool("external_workflow", { script, background: true });
  const rootId = (accepted.structuredContent as { data: { run: RunView } }).data.run.runId;
  const started = await worker.stdoutText(new RegExp(`started ${rootId}/agent/0 run (ag_\\S+)`));
  const childId = new RegExp(`started ${rootId}/agent/0 run (ag_\\S+)`).exec(started)![1]!;
  // The coordinator sees the child running once its look at the queue says a worker took it.
  const listed = async () => ((await pi.callTool("external_runs", { action: "list" })).structuredContent as { data: { runs: RunView[] } }).data.runs;
  while ((await listed()).find((run) => run.runId === childId)?.state.status !== "running") await sleep(50);

  const steered = await pi.callTool("external_runs", { action: "steer", runIds: [childId], message: "Also check the README." });
  expect(steered.structuredContent).toMatchObject({ ok: true, data: { runId: childId, status: "queued", held: false } });
  await worker.stdoutText(new RegExp(`steered ${rootId}/agent/0`));
  // Delivered, the message is gone from the database: nothing of it stays behind.
  const { default: pg } = await import("pg");
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  expect((await db.query("SELECT count(*)::int AS n FROM pi_flow.steers")).rows).toEqual([{ n: 0 }]);
  writeFileSync(release, "");

  await pi.callTool("external_runs", { action: "wait", runIds: [rootId] });
  const final = await pi.callTool("external_runs", { action: "inspect", runIds: [childId], view: "final" });
  expect(final.text).toContain("heard: Also check the README.");
  worker.child.kill("SIGTERM");
  expect((await worker.done).code).toBe(0);
}, 300_000);
