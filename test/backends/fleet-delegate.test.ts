/**
 * external_delegate on the dbos backend: a real Pi session (Pi's faux model) coordinates, a real
 * `flow worker` process runs the delegated child on its own faux model (test/fixtures/fleet/
 * steer-model.ts: the child waits in bash until a release file exists, then says what it heard),
 * and the tests' own Postgres carries it.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fauxAssistantMessage } from "@earendil-works/pi-ai";
import pg from "pg";
import { afterAll, beforeAll, expect, onTestFinished, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { PROJECT_ROOT, type RunningFlow } from "../cli/support.ts";
import { childAnswers, type Seen } from "../support/children.ts";
import { fleetFixture } from "../support/fleet.ts";
import { runFileOf } from "../support/journals.ts";
import { makeRepo } from "../support/git-repo.ts";
import { startPiSession, type PiTestSession, type ToolOutcome } from "../support/pi-session.ts";

const fleet = fleetFixture();
const { sandbox } = fleet;
const STEER_MODEL = join(PROJECT_ROOT, "test", "fixtures", "fleet", "steer-model.ts");

/** A worker whose pi children wait for `release` to exist before they answer. */
function startWorker(name: string, databaseUrl: string, cwd: string, release: string): RunningFlow {
  const args = ["worker", "--name", name, "--concurrency", "1", "--cwd", cwd, "--model", "faux/faux-1", "--extension", STEER_MODEL];
  return fleet.start(args, { PI_FLOW_DATABASE_URL: databaseUrl, FLOW_STEER_RELEASE: release });
}

const delegation = (description: string, extra: Record<string, unknown> = {}) => ({ role: "worker", description, prompt: "Do the part.", context: { mode: "none" }, ...extra });
const runOf = (outcome: ToolOutcome): RunView => (outcome.structuredContent as { data: { run: RunView } }).data.run;
const inspect = async (pi: PiTestSession, runId: string, view?: string) => (await pi.callTool("external_runs", { action: "inspect", runIds: [runId], ...(view ? { view } : {}) })).text;
const listed = async (pi: PiTestSession, runId: string): Promise<RunView | undefined> =>
  ((await pi.callTool("external_runs", { action: "list" })).structuredContent as { data: { runs: RunView[] } }).data.runs.find((run) => run.runId === runId);

/** A value's shape: its keys and the types of its leaves, whatever the values; `skipRef` leaves out that entry of `refs`. */
function shapeOf(value: unknown, skipRef?: string, key?: string): unknown {
  if (Array.isArray(value)) return value.map((item) => shapeOf(item, skipRef));
  if (value === null || typeof value !== "object") return value === null ? "null" : typeof value;
  const entries = Object.entries(value).filter(([name]) => !(key === "refs" && name === skipRef));
  return Object.fromEntries(entries.map(([name, item]) => [name, shapeOf(item, skipRef, name)]));
}

/**
 * One coordinating Pi session and one worker serve the three tests below, in order (a worker's
 * start is most of what such a test costs): the background delegation is queued before the worker
 * starts, the foreground one finds it idle, and the cancelled ones wait on a release file removed.
 */
const shared: { pi?: PiTestSession; worker?: RunningFlow; release: string } = { release: "" };
const DATABASE = "delegate_fleet";
beforeAll(async () => {
  shared.pi = await startPiSession({ env: { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: fleet.pg.urlFor(DATABASE) } });
  shared.release = join(sandbox.root, "delegate-release");
}, 120_000);
afterAll(async () => {
  await shared.pi?.dispose();
  if (!shared.worker) return;
  shared.worker.child.kill("SIGTERM");
  await shared.worker.done;
});
const sharedPi = (): PiTestSession => shared.pi!;
/** Rows of the child's Pi session still in the database. */
async function sessionRows(workflowId: string): Promise<number> {
  const client = new pg.Client({ connectionString: fleet.pg.urlFor(DATABASE) });
  await client.connect();
  try {
    return (await client.query("SELECT 1 FROM pi_flow.child_sessions WHERE workflow_id = $1", [workflowId])).rowCount ?? 0;
  } finally {
    await client.end();
  }
}
/** Steers the child's worker saved with its session, handed over and not read by a turn yet. */
async function savedSteers(workflowId: string): Promise<number> {
  const client = new pg.Client({ connectionString: fleet.pg.urlFor(DATABASE) });
  await client.connect();
  try {
    const { rows } = await client.query<{ messages: string }>("SELECT messages FROM pi_flow.child_session_steers WHERE workflow_id = $1", [workflowId]);
    return rows[0] ? (JSON.parse(rows[0].messages) as string[]).length : 0;
  } finally {
    await client.end();
  }
}
const sharedWorker = (): RunningFlow => {
  if (!shared.worker) throw new Error("the background delegation's test starts the worker; it did not get that far");
  return shared.worker;
};

test("a background delegation is queued until a worker takes it, runs there, hears a steer, and is resumed on the coordinator with the conversation it had there", async () => {
  const pi = sharedPi();
  const accepted = await pi.callTool("external_delegate", delegation("Queued part", { background: true }));
  expect(accepted.isError).toBe(false);
  const { runId } = runOf(accepted);
  expect(runOf(accepted).state.status).toBe("queued");
  expect(await inspect(pi, runId)).toMatch(/^\s*status: queued; live: yes/m);
  // A steer finds it waiting, and says for what: on the dbos backend, a worker.
  const early = await pi.callTool("external_runs", { action: "steer", runIds: [runId], message: "Too early." });
  expect(early.structuredContent).toMatchObject({ ok: true, data: { runId, status: "not_started", reason: expect.stringContaining("a flow worker to take it") } });
  expect(early.text).toContain("it waits for a background slot or a flow worker to take it");

  const worker = (shared.worker = startWorker("d1", fleet.pg.urlFor(DATABASE), pi.cwd, shared.release));
  await worker.stdoutText(new RegExp(`started ${runId}/delegate run ${runId}`));
  // Running once the coordinator's look at the queue sees the worker took it.
  while ((await listed(pi, runId))?.state.status !== "running") await sleep(50);

  const steered = await pi.callTool("external_runs", { action: "steer", runIds: [runId], message: "Also check the README." });
  expect(steered.structuredContent).toMatchObject({ ok: true, data: { runId, status: "queued", held: false } });
  await worker.stdoutText(new RegExp(`steered ${runId}/delegate`));
  writeFileSync(shared.release, "");

  await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
  expect(await inspect(pi, runId, "final")).toContain("heard: Also check the README.");
  expect(await inspect(pi, runId, "diagnostics")).toContain("ran on worker d1");

  // Its Pi session is kept in its run, as a local child's is, and the database holds none of it any more.
  const lines = readFileSync(runFileOf(pi.flowHome, runId, "session.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as { type: string });
  expect(lines[0]).toMatchObject({ type: "session", cwd: pi.cwd });
  expect(await sessionRows(`${runId}/delegate`)).toBe(0);
  // A resume continues it on the coordinator: its model sees the whole conversation the worker had.
  const seen: Seen[] = [];
  const resumed = await pi.callTool("external_delegate", delegation("Resumed part", { prompt: "Now the tests.", resume: runId }), { children: [childAnswers("tests done", seen)] });
  expect(resumed.isError).toBe(false);
  expect(resumed.text).toContain("tests done");
  expect(seen[0]!.all).toContain("Do the part.");
  expect(seen[0]!.all).toContain("released"); // the worker's bash call's result
  expect(seen[0]!.all).toContain("heard: Also check the README.");
  expect(seen[0]!.all).toContain("Now the tests.");
  expect(runOf(resumed).correlationId).toBe(runOf(accepted).correlationId);
  expect(await inspect(pi, runOf(resumed).runId, "diagnostics")).toContain(`runs on the coordinator, not a worker: it continues the session of run ${runId}`);
}, 300_000);

test("a foreground delegation on the dbos backend runs on a flow worker that names its run, answers, and its receipt has the local receipt's shape", async () => {
  // The same delegation on the local backend first: the child runs in this process. (The shared
  // session's variables are in this process's environment while it lives: this one says its own.)
  const local = await startPiSession({ env: { PI_FLOW_BACKEND: "local" } });
  const here = await local.callTool("external_delegate", delegation("Fleet part"), { children: [fauxAssistantMessage("heard nothing")] });
  await local.dispose();
  expect(here.isError).toBe(false);

  const pi = sharedPi();
  const worker = sharedWorker(); // idle, and its children answer at once: the release file is there

  // The foreground call's progress: queued until the worker takes the child, then running on it.
  const updates: string[] = [];
  const unsubscribe = pi.session.subscribe((event) => {
    if (event.type !== "tool_execution_update" || event.toolName !== "external_delegate") return;
    updates.push(((event.partialResult as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join(""));
  });
  onTestFinished(unsubscribe);
  const receipt = await pi.callTool("external_delegate", delegation("Fleet part"));
  expect(receipt.isError).toBe(false);
  expect(updates[0]).toMatch(/^Child ag_\S+ queued: waiting for a worker: 0 turns/);
  expect(updates.findIndex((text) => /^Child ag_\S+ running on d1: /.test(text))).toBeGreaterThan(0);
  const run = runOf(receipt);
  expect(run.state).toMatchObject({ status: "done", outcome: "succeeded" });
  expect(receipt.text).toContain("heard nothing");
  expect(await inspect(pi, run.runId, "diagnostics")).toContain("ran on worker d1");
  // The worker's lines name the child's run, under the fixed ID `<runId>/delegate`.
  await worker.stdoutText(new RegExp(`started ${run.runId}/delegate run ${run.runId}\\n`));
  await worker.stdoutText(new RegExp(`settled ${run.runId}/delegate run ${run.runId} succeeded`));
  // The same receipt as on the local backend, field for field; only its run has diagnostics to point to (the worker's line).
  expect(run.refs.diagnostics).toEqual({ action: "inspect", runIds: [run.runId], view: "diagnostics" });
  expect(shapeOf(receipt.structuredContent, "diagnostics")).toEqual(shapeOf(here.structuredContent));
  expect(shapeOf(receipt.details, "diagnostics")).toEqual(shapeOf(here.details));
}, 300_000);

/** A background child running on the worker, waiting in its tool call until the test writes shared.release; and a client of the test's own. */
async function heldChild(description: string): Promise<{ runId: string; db: pg.Client }> {
  const pi = sharedPi();
  const worker = sharedWorker();
  rmSync(shared.release);
  const db = new pg.Client({ connectionString: fleet.pg.urlFor(DATABASE) });
  await db.connect();
  onTestFinished(() => db.end());
  const accepted = await pi.callTool("external_delegate", delegation(description, { background: true }));
  const { runId } = runOf(accepted);
  await worker.stdoutText(new RegExp(`started ${runId}/delegate run ${runId}`));
  while ((await listed(pi, runId))?.state.status !== "running") await sleep(50);
  return { runId, db };
}

/**
 * A steer sent while `db` holds DBOS's status table locked (the caller COMMITs): resolves once the
 * steer is answered or something waits on the lock (the steer's statement, or the coordinator's look
 * at its children ahead of it on the same connection).
 */
async function steerBehindLock(db: pg.Client, runId: string, message: string): Promise<{ steered: Promise<ToolOutcome> }> {
  await db.query("BEGIN");
  await db.query("LOCK TABLE dbos.workflow_status IN ACCESS EXCLUSIVE MODE");
  let answered = false;
  const steered = sharedPi().callTool("external_runs", { action: "steer", runIds: [runId], message }).finally(() => (answered = true));
  const waitsOnLock = async () => (await db.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()")).rowCount ?? 0;
  while (!answered && (await waitsOnLock()) === 0) await sleep(20);
  return { steered }; // wrapped: an async function handing back the promise itself would wait for it
}

test("a steer to a fleet child whose answer the database already holds answers terminal, not queued, and nothing is noted undelivered", async () => {
  const pi = sharedPi();
  const { runId, db } = await heldChild("Ended part");
  writeFileSync(shared.release, "");
  // The child's answer is in the database...
  const status = async () => (await db.query<{ status: string }>("SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1", [`${runId}/delegate`])).rows[0]?.status;
  while ((await status()) !== "SUCCESS") await sleep(10);
  // ...and its coordinator's next look at it waits on the lock: the steer comes before it has seen the answer.
  const { steered } = await steerBehindLock(db, runId, "Too late.");
  await db.query("COMMIT");
  expect((await steered).structuredContent).toMatchObject({ ok: true, data: { runId, status: "terminal" } });
  await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
  const diagnostics = await inspect(pi, runId, "diagnostics");
  expect(diagnostics).not.toContain("steer_undelivered");
  expect(diagnostics).not.toContain("Too late.");
}, 300_000);

test("Esc frees a steer that waits for a fleet child's database, and the child runs on", async () => {
  const pi = sharedPi();
  const { runId, db } = await heldChild("Waited part");
  // The database holds the steer on a lock: the steer waits for its answer, until Esc ends the call.
  const { steered } = await steerBehindLock(db, runId, "Also check the docs.");
  await pi.session.abort();
  const aborted = await steered;
  await db.query("COMMIT");
  expect(aborted.isError).toBe(true);
  expect(aborted.text).toMatch(/aborted/i);
  writeFileSync(shared.release, "");
  const waited = await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
  expect(waited.structuredContent).toMatchObject({ ok: true, data: { completed: [{ runId, state: { outcome: "succeeded" } }] } });
}, 300_000);

test("on the worker, at most 8 steers wait unread (a 9th is refused until the child reads them), and the 8 reach the child", async () => {
  const pi = sharedPi();
  const worker = sharedWorker();
  rmSync(shared.release); // the child waits in its tool call, where steers queue unread
  const accepted = await pi.callTool("external_delegate", delegation("Bounded part", { background: true }));
  const { runId } = runOf(accepted);
  await worker.stdoutText(new RegExp(`started ${runId}/delegate run ${runId}`));
  while ((await listed(pi, runId))?.state.status !== "running") await sleep(50);
  const steer = async (message: string) => (await pi.callTool("external_runs", { action: "steer", runIds: [runId], message })).structuredContent;
  for (let n = 1; n <= 8; n++) expect(await steer(`Steer ${n}.`)).toMatchObject({ ok: true, data: { status: "queued" } });
  // The worker has handed all 8 to the child, which has read none: the database holds them with its session.
  await worker.stdoutText(new RegExp(`(steered ${runId}/delegate\\n[\\s\\S]*){8}`));
  while ((await savedSteers(`${runId}/delegate`)) < 8) await sleep(50);
  expect(await steer("Steer 9.")).toMatchObject({ ok: true, data: { status: "refused", reason: expect.stringContaining(`Run ${runId} already has 8 steers its child has not read`) } });

  writeFileSync(shared.release, ""); // its tool call returns, and its next model request reads all 8
  await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
  expect(await inspect(pi, runId, "final")).toContain("heard: Steer 8.");
  expect(await inspect(pi, runId, "diagnostics")).not.toContain("steer_undelivered");
}, 300_000);

test("external_runs cancel of a background delegation, and the parent's abort of a foreground one, reach the child on the worker, which settles it cancelled (and a resume of it says why it cannot be)", async () => {
  const pi = sharedPi();
  const worker = sharedWorker();
  rmSync(shared.release); // from here the worker's children wait until cancelled
  const accepted = await pi.callTool("external_delegate", delegation("Cancelled part", { background: true }));
  const { runId } = runOf(accepted);
  await worker.stdoutText(new RegExp(`started ${runId}/delegate run ${runId}`));
  while ((await listed(pi, runId))?.state.status !== "running") await sleep(50);
  // A steer its worker handed to the child, which waits in its tool call and never reads it.
  expect((await pi.callTool("external_runs", { action: "steer", runIds: [runId], message: "Stop after this." })).structuredContent).toMatchObject({ ok: true, data: { status: "queued" } });
  while ((await savedSteers(`${runId}/delegate`)) < 1) await sleep(50);

  const cancelled = await pi.callTool("external_runs", { action: "cancel", runIds: [runId] });
  expect(cancelled.isError).toBe(false);
  await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
  expect((await listed(pi, runId))?.state).toMatchObject({ status: "done", outcome: "cancelled" });
  // Said once the cancel lands, not left in the database for the sweep: the worker gives it back only after.
  const notes = (await inspect(pi, runId, "diagnostics")).split("\n").filter((line) => line.includes("steer_undelivered"));
  expect(notes).toEqual([expect.stringContaining("steer not delivered (the child was stopped before its worker answered, and it had not read it): Stop after this.")]);
  await worker.stdoutText(new RegExp(`settled ${runId}/delegate run ${runId} cancelled`));
  // No answer came back, so no session was kept: a resume says so, with nothing launched.
  const resumed = await pi.callTool("external_delegate", delegation("Resumed part", { resume: runId }));
  expect(resumed.structuredContent).toMatchObject({ ok: false, error: { code: "request_invalid" } });
  expect(resumed.text).toContain(`Run ${runId} cannot be resumed: its Pi session was not kept (the child was stopped before its worker answered)`);

  // The parent's abort stops a foreground delegation's child on the worker the same way.
  const startedSoFar = [...(await worker.stdoutText(/ready/)).matchAll(/started (ag_\S+)\/delegate run/g)].map((found) => found[1]!);
  const call = pi.callTool("external_delegate", delegation("Aborted part"));
  const another = new RegExp(`started (?!${startedSoFar.join("|")})(ag_\\S+)/delegate run`);
  const abortedId = another.exec(await worker.stdoutText(another))![1]!;
  await pi.session.abort();
  const aborted = await call;
  expect(aborted.structuredContent).toMatchObject({ ok: false, error: { code: "cancelled" }, data: { run: { runId: abortedId, state: { status: "done", outcome: "cancelled" } } } });
  await worker.stdoutText(new RegExp(`settled ${abortedId}/delegate run ${abortedId} cancelled`));
  shared.worker = undefined;
  worker.child.kill("SIGTERM");
  expect((await worker.done).code).toBe(0);
}, 300_000);

test("a worktree delegation on the dbos backend runs on the coordinator, where its worktree is, and says so; so does a workflow's agent() that resumes a run", async () => {
  const repo = makeRepo();
  onTestFinished(() => rmSync(repo, { recursive: true, force: true }));
  const pi = await startPiSession({ cwd: repo, env: { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: fleet.pg.urlFor(DATABASE) } });
  onTestFinished(() => pi.dispose());
  // No worker runs any more (the tests above stopped it): the child needs none.
  const receipt = await pi.callTool("external_delegate", delegation("Isolated part", { isolation: "worktree" }), { children: [fauxAssistantMessage("done here")] });
  expect(receipt.isError).toBe(false);
  const { runId } = runOf(receipt);
  expect(receipt.text).toContain("done here");
  const diagnostics = await inspect(pi, runId, "diagnostics");
  expect(diagnostics).toContain("runs on the coordinator, not a worker: its worktree is on this machine's disk");
  expect(diagnostics).not.toContain("ran on worker");

  // Its Pi session is on this machine: a delegation resuming it runs here too.
  const resumed = await pi.callTool("external_delegate", delegation("Resumed part", { resume: runId }), { children: [fauxAssistantMessage("resumed here")] });
  expect(resumed.isError).toBe(false);
  expect(resumed.text).toContain("resumed here");
  expect(await inspect(pi, runOf(resumed).runId, "diagnostics")).toContain(`runs on the coordinator, not a worker: it continues the session of run ${runId}, kept on this machine`);

  // A workflow's worktree child likewise.
  const script = 'return (await agent({ role: "worker", description: "Isolated call", prompt: "Do it.", context: { mode: "none" }, isolation: "worktree" })).value;';
  const workflow = await pi.callTool("external_workflow", { script }, { children: [fauxAssistantMessage("workflow child here")] });
  expect(workflow.isError).toBe(false);
  expect(workflow.text).toContain("workflow child here");

  // And a workflow's agent() that resumes a run: it continues the session kept here, with its history.
  const seen: Seen[] = [];
  const resuming = `return (await agent({ role: "worker", description: "Resumed call", prompt: "Go on.", context: { mode: "none" }, resume: ${JSON.stringify(runId)} })).value;`;
  const continued = await pi.callTool("external_workflow", { script: resuming }, { children: [childAnswers("went on here", seen)] });
  expect(continued.isError).toBe(false);
  expect(continued.text).toContain("went on here");
  expect(seen[0]!.all).toContain("done here");
  expect(seen[0]!.all).toContain("Go on.");
}, 120_000);

test("a session that shuts down closes its fleet connections: the database has none of its left, idle or not", async () => {
  const database = "shutdown_fleet"; // its own: the shared session's coordinator is on another
  const pi = await startPiSession({ env: { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: fleet.pg.urlFor(database) } });
  onTestFinished(() => pi.dispose());
  // No worker runs: the child waits on the queue, and the shutdown cancels it.
  expect((await pi.callTool("external_delegate", delegation("Unheld part", { background: true }))).isError).toBe(false);
  const db = new pg.Client({ connectionString: fleet.pg.urlFor(database) });
  await db.connect();
  onTestFinished(() => db.end());
  const others = async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [database])).rows[0]!.n;
  expect(await others()).toBeGreaterThan(0); // the coordinator's pools
  await pi.shutdown();
  expect(await others()).toBe(0);
}, 120_000);

test("a delegation on the dbos backend whose database cannot be reached is configuration_invalid before launch, and records no run", async () => {
  const pi = await startPiSession({ env: { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: "postgres://postgres:hunter2@127.0.0.1:1/nowhere" } });
  onTestFinished(() => pi.dispose());
  const refused = await pi.callTool("external_delegate", delegation("Unlaunched part"));
  expect(refused.isError).toBe(true);
  expect(refused.structuredContent).toMatchObject({ ok: false, error: { code: "configuration_invalid" } });
  expect(refused.text).toContain("postgres://postgres:***@127.0.0.1:1/nowhere");
  expect(refused.text).not.toContain("hunter2");
  const runs = (await pi.callTool("external_runs", { action: "list" })).structuredContent as { data: { runs: RunView[] } };
  expect(runs.data.runs).toEqual([]);
}, 120_000);
