/**
 * A child whose folder one worker's checkout lacks: that worker puts it back on the queue for one
 * whose checkout has it, and when no live worker has it, the child fails naming the folder and the
 * workers. Real `flow worker`s (--stub) on the tests' own Postgres, each with a checkout of its own.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import { afterAll, expect, onTestFinished, test } from "vitest";
import pg from "pg";
import { loadDbos, migrate } from "../../src/backends/dbos-load.ts";
import { refuse } from "../../src/backends/folder-refusals.ts";
import { applicationVersion, CHILD_QUEUE, DBOS_APPLICATION } from "../../src/backends/names.ts";
import { childRequest, enqueueChild, fleetFixture, testPool } from "../support/fleet.ts";
import type { RunningFlow } from "../cli/support.ts";
import { setTimeout as sleep } from "node:timers/promises";
import type { RunView } from "../../src/contract/run-schema.ts";
import { startPiSession } from "../support/pi-session.ts";

const fleet = fleetFixture();

test("a child whose folder the worker that took it lacks goes back on the queue and runs on a worker whose checkout has it", async () => {
  const databaseUrl = fleet.pg.urlFor("missing_folder");
  const pulled = join(fleet.sandbox.root, "pulled");
  mkdirSync(join(pulled, "packages", "new"), { recursive: true });
  const having = fleet.startWorker("w2", databaseUrl, ["--stub"], pulled);
  const lacking = fleet.startWorker("w1", databaseUrl, ["--stub"]);
  await Promise.all([having.stdoutText(/worker w2 ready/), lacking.stdoutText(/worker w1 ready/)]);
  // w2 is alive (its heartbeat is fresh) but takes nothing until w1 has refused the child.
  having.child.kill("SIGSTOP");
  onTestFinished(() => void having.child.kill("SIGCONT"));
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const handle = await enqueueChild(client, childRequest("newpkg", { cwd: "packages/new" }));
  const refused = await lacking.stdoutText(/(requeued|settled|failed) wf_newpkg\/agent\/0 .*\n/);
  expect(refused).toContain("requeued wf_newpkg/agent/0 run ag_newpkg: its folder packages/new does not exist in this worker's project; another worker may have it");
  // w1 may take a child it gave back again (each time later: the next test); stopped, it cannot,
  // so the child's next worker is w2 whatever the two workers' polls would have made of the race.
  lacking.child.kill("SIGSTOP");
  onTestFinished(() => void lacking.child.kill("SIGCONT"));
  having.child.kill("SIGCONT");
  const answer = await handle.getResult();
  expect(answer.worker).toBe("w2");
  expect(answer.result.outcome).toBe("succeeded");
  expect(await lacking.stdoutText(/[^]*/)).not.toMatch(/settled wf_newpkg|failed wf_newpkg/);
}, 120_000);

test("a child whose folder no live worker's checkout has fails as configuration_invalid, naming the folder and the workers that lack it", async () => {
  const databaseUrl = fleet.pg.urlFor("missing_everywhere");
  const worker = fleet.startWorker("w3", databaseUrl, ["--stub"]);
  await worker.stdoutText(/worker w3 ready/);
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const handle = await enqueueChild(client, childRequest("nowhere", { cwd: "packages/absent" }));
  const message =
    "The child's folder packages/absent does not exist in the project of any live flow worker (w3 lack it): check out the project where it has that folder on a worker, or give the worker a --cwd that has it.";
  expect((await handle.getResult()).result).toMatchObject({ outcome: "failed", error: { code: "configuration_invalid", message } });
  expect(await worker.stdoutText(/failed wf_nowhere\/agent\/0 .*\n/)).toContain(message);
}, 120_000);

test("a worker that takes a child it refused again puts it back for twice as long each time, up to 30 s: its refusals do not come every second while the other workers are busy", async () => {
  const url = fleet.pg.urlFor("refusal_delays");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 2);
  onTestFinished(() => pool.end());
  const id = "wf_busy_fleet/agent/0";
  // Two live workers; the other, busy, never takes the child.
  await pool.query("INSERT INTO pi_flow.workers (name, version, concurrency, instance) VALUES ('w1', $1, 1, 'a'), ('w2', $1, 1, 'b')", [applicationVersion()]);
  await pool.query("INSERT INTO dbos.workflow_status (workflow_uuid, status, queue_name, executor_id) VALUES ($1, 'PENDING', $2, 'w1')", [id, CHILD_QUEUE]);
  const delays: number[] = [];
  for (let time = 0; time < 7; time++) {
    const before = Date.now();
    expect(await refuse(pool, id, "packages/new", "w1", applicationVersion())).toEqual({ requeued: true });
    const { rows } = await pool.query<{ status: string; due: string }>("SELECT status, delay_until_epoch_ms AS due FROM dbos.workflow_status WHERE workflow_uuid = $1", [id]);
    expect(rows[0]!.status).toBe("DELAYED");
    delays.push(Math.round((Number(rows[0]!.due) - before) / 1000));
    await pool.query("UPDATE dbos.workflow_status SET status = 'PENDING', executor_id = 'w1' WHERE workflow_uuid = $1", [id]); // w1 takes it again
  }
  expect(delays).toEqual([1, 2, 4, 8, 16, 30, 30]);
}, 60_000);

/**
 * A Pi session on the dbos backend whose first child has run, and two stub workers: `having` (the
 * session's project, with packages/new) stopped, `lacking` (a project without it) running; the
 * refusal `lacking` notes waits on the lock `db` holds until the test COMMITs. They last for the
 * file: the last test to use them ends them (`ending`).
 */
const ending: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const end of ending.reverse()) await end();
});

async function oneWorkerLacksTheFolder(database: string, names: [string, string]) {
  const databaseUrl = fleet.pg.urlFor(database);
  const pi = await startPiSession({ env: { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: databaseUrl } });
  ending.push(() => pi.dispose());
  mkdirSync(join(pi.cwd, "packages", "new"), { recursive: true });
  const having = fleet.startWorker(names[0], databaseUrl, ["--stub"], pi.cwd);
  const lacking = fleet.startWorker(names[1], databaseUrl, ["--stub"]);
  await Promise.all([having.stdoutText(new RegExp(`worker ${names[0]} ready`)), lacking.stdoutText(new RegExp(`worker ${names[1]} ready`))]);
  // A first child opens the coordinator's database (its migration would wait on the lock below).
  const first = await pi.callTool("external_workflow", { script: 'return (await agent({ role: "explorer", description: "First part", prompt: "Look.", context: { mode: "none" } })).value;' });
  expect(first.isError).toBe(false);
  having.child.kill("SIGSTOP"); // alive, but takes nothing until the test lets it
  ending.push(() => void having.child.kill("SIGCONT"));
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  ending.push(() => db.end());
  await db.query("BEGIN");
  await db.query("LOCK TABLE pi_flow.child_refusals IN EXCLUSIVE MODE");
  return { pi, having, lacking, db };
}

/** The session and workers the test below leaves for the one after it (their start costs seconds). */
let left: { pi: Awaited<ReturnType<typeof startPiSession>>; having: RunningFlow; db: pg.Client } | undefined;

test("a child a worker took and then gave back for its missing folder is queued again in its coordinator's view, which says why; the worker that has the folder then runs it", async () => {
  // v1's note of its refusal waits on the lock: the child stays taken by v1 until the test lets go.
  const { pi, having, lacking, db } = await oneWorkerLacksTheFolder("requeued_view", ["v2", "v1"]);

  const script = 'return (await agent({ role: "explorer", description: "New part", prompt: "Look.", cwd: "packages/new", context: { mode: "none" } })).value;';
  const accepted = await pi.callTool("external_workflow", { script, background: true });
  expect(accepted.isError, accepted.text).toBe(false);
  const rootId = (accepted.structuredContent as { data: { run: RunView } }).data.run.runId;
  const child = async () => ((await pi.callTool("external_runs", { action: "list" })).structuredContent as { data: { runs: RunView[] } }).data.runs.find((run) => run.task.parentRunId === rootId);
  while ((await child())?.state.status !== "running") await sleep(50);

  await db.query("COMMIT"); // v1 refuses it and puts it back on the queue
  await lacking.stdoutText(new RegExp(`requeued ${rootId}/agent/0`));
  lacking.child.kill("SIGSTOP"); // and takes it no more: the child waits on the queue
  onTestFinished(() => void lacking.child.kill("SIGCONT"));
  let view = await child();
  while (view?.state.status !== "queued") view = await sleep(50).then(child);
  const diagnostics = await pi.callTool("external_runs", { action: "inspect", runIds: [view.runId], view: "diagnostics" });
  expect(diagnostics.text).toContain("queued again: its folder packages/new does not exist in worker v1's project; another worker may take it");

  having.child.kill("SIGCONT"); // v1 stays stopped until the test ends, so the child's next worker is v2
  await pi.callTool("external_runs", { action: "wait", runIds: [rootId] });
  expect((await child())?.state).toMatchObject({ status: "done", outcome: "succeeded" });
  const journal = await pi.callTool("external_runs", { action: "inspect", runIds: [view.runId], view: "diagnostics" });
  expect(journal.text).toContain("ran on worker v2");
  // The next test's set-up: v2 stopped again, v1's next refusal waiting on the lock.
  having.child.kill("SIGSTOP");
  await db.query("BEGIN");
  await db.query("LOCK TABLE pi_flow.child_refusals IN EXCLUSIVE MODE");
  left = { pi, having, db };
}, 120_000);

test("a foreground workflow's progress line says briefly why a child a worker gave back is queued again, not just (queued)", async () => {
  // v1's note of its refusal waits on the lock: its coordinator sees the child taken by v1 first.
  if (!left) throw new Error("the test above starts the session and the workers; it did not get that far");
  const { pi, having, db } = left;

  const waiters: { pattern: string; heard: (line: string) => void }[] = [];
  pi.session.subscribe((event) => {
    if (event.type !== "tool_execution_update" || event.toolName !== "external_workflow") return;
    const text = ((event.partialResult as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("");
    for (const waiter of waiters.splice(0)) if (text.includes(waiter.pattern)) waiter.heard(text);
    else waiters.push(waiter);
  });
  const heard = (pattern: string) => new Promise<string>((heard) => waiters.push({ pattern, heard }));
  const running = heard("New part (running)");
  const script = 'return (await agent({ role: "explorer", description: "New part", prompt: "Look.", cwd: "packages/new", context: { mode: "none" } })).value;';
  const receipt = pi.callTool("external_workflow", { script });
  await running;
  const requeued = heard("New part (queued"); // once taken: queued again
  await db.query("COMMIT"); // v1 refuses it and puts it back on the queue
  expect(await requeued).toContain("1 queued, 0 running, 0 finished: New part (queued again: v1 lacks its folder packages/new).");
  having.child.kill("SIGCONT");
  expect((await receipt).isError).toBe(false);
}, 120_000);
