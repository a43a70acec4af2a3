/**
 * kill -9 of a worker mid-child: another worker takes the child over once the dead one's heartbeat
 * has gone silent, runs it again, and the coordinator gets its result exactly once. Real processes
 * throughout: Postgres, two `flow worker`s and a `flow run`, children on the pi harness answered by
 * Pi's faux provider, the slow part a real shell command.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, test } from "vitest";
import pg from "pg";
import { FAUX_EXTENSION, flow, runFileText, startedRunId, type RunningFlow } from "../cli/support.ts";
import { fleetFixture, oneChildScript } from "../support/fleet.ts";
import { jsonSpans, startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.ts";

const fleet = fleetFixture();
const { sandbox, project } = fleet;
const firstAttempt = join(sandbox.root, "first-attempt");
// The first attempt marks itself and then waits as long as its worker lives; a second attempt returns at once.
const command = `if [ -e ${firstAttempt} ]; then echo second attempt; else touch ${firstAttempt}; while kill -0 $PPID 2>/dev/null; do sleep 0.2; done; fi`;
// The held part waits for the test to release it, whatever happens to the coordinator meanwhile.
const held = join(sandbox.root, "held-started");
const release = join(sandbox.root, "release");
const endless = join(sandbox.root, "endless-started");
// The handed-back part: its first attempt marks itself and waits until its worker stops it.
const politeFirst = join(sandbox.root, "polite-first-attempt");
const politeCommand = `if [ -e ${politeFirst} ]; then echo second attempt; else touch ${politeFirst}; while true; do sleep 0.2; done; fi`;
const holdCommand = `touch ${held}; while [ ! -e ${release} ]; do sleep 0.2; done; echo released`;
// The two-turn part: turn 1's command logs each run of it; the model's turn 2 waits for the test.
const twoTurnRuns = join(sandbox.root, "two-turn-runs");
const turnTwo = join(sandbox.root, "release-turn-two");
// The steered part: its first attempt's command runs until its worker stops; a second attempt returns at once.
const steeredFirst = join(sandbox.root, "steered-first-attempt");
const steeredCommand = `if [ -e ${steeredFirst} ]; then echo second attempt; else touch ${steeredFirst}; while true; do sleep 0.2; done; fi`;
sandbox.fauxRules([
  { match: "Do the slow part", tool: { name: "bash", arguments: { command } }, then: "slow part done" },
  { match: "Do the held part", tool: { name: "bash", arguments: { command: holdCommand } }, then: "held part done" },
  { match: "Do the polite part", tool: { name: "bash", arguments: { command: politeCommand } }, then: "polite part done" },
  { match: "Do the two-turn part", tool: { name: "bash", arguments: { command: `echo ran >> ${twoTurnRuns}; echo output of turn one` } }, then: "done after: {toolResult}", thenWaitFor: turnTwo },
  { match: "Do the steered part", tool: { name: "bash", arguments: { command: steeredCommand } }, then: "{toolResult}; last heard: {lastUser}", once: true },
  { match: "Do the endless part", tool: { name: "bash", arguments: { command: `touch ${endless}; while true; do sleep 0.2; done` } }, then: "never" },
]);
const endlessScript = sandbox.file(
  "endless.js",
  [
    "export const apiVersion = 1;",
    'export const meta = { name: "endless" };',
    'const run = await agent({ role: "worker", description: "Endless part", prompt: "Do the endless part.", context: { mode: "none" } });',
    "return run.value;",
  ].join("\n"),
);
const politeScript = sandbox.file(
  "polite.js",
  [
    "export const apiVersion = 1;",
    'export const meta = { name: "polite" };',
    'const run = await agent({ role: "worker", description: "Polite part", prompt: "Do the polite part.", context: { mode: "none" } });',
    "return run.value;",
  ].join("\n"),
);
const heldScript = oneChildScript(sandbox, "held", "held");
const script = oneChildScript(sandbox, "slow", "slow");

const twoTurnScript = oneChildScript(sandbox, "two-turns", "two-turn");

const steeredScript = oneChildScript(sandbox, "steered", "steered");

const MODEL = ["--model", "faux/faux-1", "--extension", FAUX_EXTENSION];

const start = (args: string[], env: Record<string, string>): RunningFlow => fleet.start(args, env);

test("a worker killed mid-child: another worker takes the child over after the heartbeat silence, and the script gets its result once", async () => {
  const database = { PI_FLOW_DATABASE_URL: fleet.pg.urlFor("fleet_failover") };
  const first = start(["worker", "--name", "w1", "--concurrency", "1", "--cwd", project, ...MODEL], database);
  await first.stdoutText(/worker w1 ready/);
  const coordinator = start(["run", script, "--cwd", project, ...MODEL], { ...database, PI_FLOW_BACKEND: "dbos" });
  await first.stdoutText(/started \S+\/agent\/0 run ag_/);
  while (!existsSync(firstAttempt)) await sleep(50); // the child's command is running on w1
  first.child.kill("SIGKILL");

  const second = start(["worker", "--name", "w2", "--concurrency", "1", "--cwd", project, ...MODEL], database);
  await second.stdoutText(/took over 1 unfinished child of a silent worker: \S+\/agent\/0/);
  // Killed in turn 1's tool call: only the prompt was saved, so turn 1 runs again on w2.
  await second.stdoutText(/continued \S+\/agent\/0 run ag_\S+: continued on worker w2 from turn 1 \(taken over from w1\)/);
  await second.stdoutText(/settled \S+\/agent\/0 run ag_\S+ succeeded/);

  const result = await coordinator.done;
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toBe("slow part done");
  expect(result.stderr).toMatch(/1 child, 0 failed agent\(\) calls/);
  const runId = /run (ag_\S+) succeeded/.exec((await second.stdoutText(/settled/)))![1]!;
  const shown = await flow(["runs", "show", runId, "--view", "diagnostics", "--cwd", project], { env: sandbox.env });
  expect(shown.stdout).toContain("ran on worker w2");
  second.child.kill("SIGTERM");
  expect((await second.done).code).toBe(0);
});

test("a coordinator killed mid-run: flow run --resume takes the child's result from the database, and the child never starts twice", async () => {
  const database = { PI_FLOW_DATABASE_URL: fleet.pg.urlFor("fleet_resume") };
  const worker = start(["worker", "--name", "w3", "--concurrency", "1", "--cwd", project, ...MODEL], database);
  await worker.stdoutText(/worker w3 ready/);
  const coordinator = start(["run", heldScript, "--cwd", project, ...MODEL], { ...database, PI_FLOW_BACKEND: "dbos" });
  const runId = startedRunId(await coordinator.stderrLine(/^run wf_\S+ started/));
  while (!existsSync(held)) await sleep(50); // the child's command runs on w3
  coordinator.child.kill("SIGKILL");
  await coordinator.done;

  // The child goes on without its coordinator, and its answer waits in Postgres.
  writeFileSync(release, "");
  await worker.stdoutText(/settled \S+\/agent\/0 run ag_\S+ succeeded/);
  const resumed = await flow(["run", "--resume", runId, "--cwd", project, ...MODEL], { env: { ...sandbox.env, ...database, PI_FLOW_BACKEND: "dbos" } });
  expect(resumed.code).toBe(0);
  expect(JSON.parse(resumed.stdout)).toBe("held part done");
  worker.child.kill("SIGTERM");
  const { stdout } = await worker.done;
  expect(stdout.match(/^started /gm)).toHaveLength(1);
  expect(stdout).toContain(`started ${runId}/agent/0 `);
});

test("Ctrl-C on the coordinator cancels its child on the worker running it: the worker aborts the child's command and settles it cancelled", async () => {
  const database = { PI_FLOW_DATABASE_URL: fleet.pg.urlFor("fleet_cancel") };
  const worker = start(["worker", "--name", "w4", "--concurrency", "1", "--cwd", project, ...MODEL], database);
  await worker.stdoutText(/worker w4 ready/);
  const coordinator = start(["run", endlessScript, "--cwd", project, ...MODEL], { ...database, PI_FLOW_BACKEND: "dbos" });
  while (!existsSync(endless)) await sleep(50); // the child's command runs on w4
  coordinator.child.kill("SIGINT");
  const result = await coordinator.done;
  expect(result.code).toBe(130);
  expect(result.stderr).toMatch(/^child 1 cancelled: Endless part/m);
  await worker.stdoutText(/settled \S+\/agent\/0 run ag_\S+ cancelled/);
  worker.child.kill("SIGTERM");
  expect((await worker.done).code).toBe(0);
});

let collector: OtlpReceiver;
beforeAll(async () => {
  collector = await startOtlpReceiver();
});
afterAll(async () => {
  await collector?.close();
});

test("a worker stopped with SIGTERM mid-child hands the child back and exits cleanly; another worker runs it at once, and the script gets its result once", async () => {
  const database = { PI_FLOW_DATABASE_URL: fleet.pg.urlFor("fleet_hand_back") };
  // The first worker traces: the span of the child it hands back ends saying so.
  const traced = { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" };
  const first = start(["worker", "--name", "w5", "--concurrency", "1", "--cwd", project, ...MODEL], { ...database, ...traced });
  await first.stdoutText(/worker w5 ready/);
  const coordinator = start(["run", politeScript, "--cwd", project, ...MODEL], { ...database, PI_FLOW_BACKEND: "dbos" });
  await first.stdoutText(/started \S+\/agent\/0 run ag_/);
  while (!existsSync(politeFirst)) await sleep(50); // the child's command is running on w5
  first.child.kill("SIGTERM");
  const stopped = await first.done;
  expect(stopped.code).toBe(0);
  expect(stopped.stdout).toMatch(/worker w5 stopped \(SIGTERM\): 1 unfinished child handed back to the queue/);
  const handedBack = jsonSpans(collector.requests).filter((span) => span.attributes["pi_flow.worker"] === "w5");
  expect(handedBack.map((span) => [span.name, span.attributes["pi_flow.outcome"]])).toEqual([["worker worker", "handed_back"]]);

  // Handed back, not left for the heartbeat sweep: the next worker simply takes it from the queue.
  const second = start(["worker", "--name", "w6", "--concurrency", "1", "--cwd", project, ...MODEL], database);
  await second.stdoutText(/settled \S+\/agent\/0 run ag_\S+ succeeded/);
  const result = await coordinator.done;
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toBe("polite part done");
  expect(result.stderr).toMatch(/1 child, 0 failed agent\(\) calls/);
  second.child.kill("SIGTERM");
  const { stdout } = await second.done;
  expect(stdout).not.toMatch(/took over/);
  expect(stdout.match(/^started /gm)).toHaveLength(1);
  expect(stdout).toMatch(/^continued \S+\/agent\/0 run ag_\S+: continued on worker w6 from turn 1 \(taken over from w5\)$/m);
});

test("a worker killed after a pi child's first turn was saved: after the heartbeat silence another worker continues from turn 2, the tool runs once, and the usage counts each turn once", async () => {
  const database = { PI_FLOW_DATABASE_URL: fleet.pg.urlFor("fleet_continue") };
  const first = start(["worker", "--name", "w7", "--concurrency", "1", "--cwd", project, ...MODEL], database);
  await first.stdoutText(/worker w7 ready/);
  const coordinator = start(["run", twoTurnScript, "--cwd", project, ...MODEL], { ...database, PI_FLOW_BACKEND: "dbos" });
  await first.stdoutText(/started \S+\/agent\/0 run ag_/);
  // Turn 1 ran its command; once w7 has saved its result, the model's turn 2 is waiting.
  while (!existsSync(twoTurnRuns)) await sleep(50);
  const client = new pg.Client({ connectionString: database.PI_FLOW_DATABASE_URL });
  await client.connect();
  const saved = async () => (await client.query(`SELECT 1 FROM pi_flow.child_sessions WHERE entry LIKE '%"role":"toolResult"%'`)).rowCount ?? 0;
  while ((await saved()) === 0) await sleep(50);
  first.child.kill("SIGKILL");
  writeFileSync(turnTwo, "");

  const second = start(["worker", "--name", "w8", "--concurrency", "1", "--cwd", project, ...MODEL], database);
  await second.stdoutText(/took over 1 unfinished child of a silent worker: \S+\/agent\/0/);
  const settled = await second.stdoutText(/settled \S+\/agent\/0 run ag_\S+ succeeded/);
  expect(settled).toMatch(/^continued \S+\/agent\/0 run ag_\S+: continued on worker w8 from turn 2 \(taken over from w7\)$/m);
  const result = await coordinator.done;
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toBe("done after: output of turn one");
  expect(readFileSync(twoTurnRuns, "utf8")).toBe("ran\n");
  const runId = /run (ag_\S+) succeeded/.exec(settled)![1]!;
  const record = JSON.parse(runFileText(sandbox, runId, "record.json")) as { usage?: { turns: number; toolCalls: number } };
  expect(record.usage).toMatchObject({ turns: 2, toolCalls: 1 });
  expect((await client.query("SELECT 1 FROM pi_flow.child_sessions")).rowCount).toBe(0);
  await client.end();
  second.child.kill("SIGTERM");
  expect((await second.done).code).toBe(0);
});

test("a steer the worker had handed to a pi child that no turn had read yet is handed over again by the worker that continues the child", async () => {
  const database = { PI_FLOW_DATABASE_URL: fleet.pg.urlFor("fleet_steer_takeover") };
  const first = start(["worker", "--name", "w9", "--concurrency", "1", "--cwd", project, ...MODEL], database);
  await first.stdoutText(/worker w9 ready/);
  const coordinator = start(["run", steeredScript, "--cwd", project, ...MODEL], { ...database, PI_FLOW_BACKEND: "dbos" });
  const workflowId = /started (\S+\/agent\/0) run ag_/.exec(await first.stdoutText(/started \S+\/agent\/0 run ag_/))![1]!;
  while (!existsSync(steeredFirst)) await sleep(50); // turn 1's command runs on w9
  const client = new pg.Client({ connectionString: database.PI_FLOW_DATABASE_URL });
  await client.connect();
  // What the coordinator's external_runs steer writes; w9 takes it and hands it to the child, whose tool call still runs.
  await client.query("INSERT INTO pi_flow.steers (workflow_id, message) VALUES ($1, $2)", [workflowId, "Also say what you heard last."]);
  await first.stdoutText(new RegExp(`steered ${workflowId}`));
  while ((await client.query("SELECT 1 FROM pi_flow.child_session_steers WHERE workflow_id = $1", [workflowId])).rowCount === 0) await sleep(50);
  first.child.kill("SIGTERM");
  expect((await first.done).code).toBe(0);

  const second = start(["worker", "--name", "w10", "--concurrency", "1", "--cwd", project, ...MODEL], database);
  const settled = await second.stdoutText(/settled \S+\/agent\/0 run ag_\S+ succeeded/);
  expect(settled).toMatch(/^continued \S+\/agent\/0 run ag_\S+: continued on worker w10 from turn 1 \(taken over from w9\)$/m);
  const result = await coordinator.done;
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toBe("second attempt; last heard: Also say what you heard last.");
  expect((await client.query("SELECT 1 FROM pi_flow.child_session_steers")).rowCount).toBe(0);
  await client.end();
  second.child.kill("SIGTERM");
  expect((await second.done).code).toBe(0);
});
