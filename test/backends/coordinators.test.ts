/**
 * Two coordinators on one workflow run (a resume from another host while the first still runs it):
 * the second is refused before it enqueues anything, while the first is alive and waits on the
 * run's children; once the first lets go, or its process is gone, the second goes on. Two real
 * coordinators on the tests' own Postgres; no worker runs, so the children wait on the queue.
 */
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { dbosCoordinator } from "../../src/backends/dbos-coordinator.ts";
import { childRequest, fleetFixture, testPool } from "../support/fleet.ts";
import { orphanSweep } from "../../src/backends/orphan-delegations.ts";
import { deleteSilentClaims } from "../../src/backends/coordinator-claims.ts";

const fleet = fleetFixture();

test("a second coordinator of a run whose first coordinator lives and waits on its children is refused request_invalid, naming it, and enqueues nothing; once the first lets go it goes on", async () => {
  const url = fleet.pg.urlFor("two_coordinators");
  const first = dbosCoordinator(url);
  const second = dbosCoordinator(url);
  onTestFinished(() => first.close());
  onTestFinished(() => second.close());
  const db = new pg.Client({ connectionString: url });
  db.on("error", () => undefined);
  await first.ready();
  await db.connect();
  onTestFinished(() => db.end());
  const status = async (id: string) => (await db.query<{ status: string }>("SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1", [id])).rows[0]?.status;

  const stopFirst = new AbortController();
  const waiting = first.run(childRequest("twice"), stopFirst.signal, () => undefined);
  waiting.catch(() => undefined);
  while ((await status("wf_twice/agent/0")) !== "ENQUEUED") await sleep(50);

  const later = childRequest("twice", { workflowId: "wf_twice/agent/1" });
  await expect(second.run(later, new AbortController().signal, () => undefined)).rejects.toMatchObject({
    code: "request_invalid",
    message: expect.stringContaining(`Run wf_twice's children are being waited on by another live coordinator (process ${process.pid} on ${hostname()}, heard from `),
  });
  expect(await status("wf_twice/agent/1")).toBeUndefined(); // nothing of the second was enqueued

  stopFirst.abort();
  await expect(waiting).rejects.toThrow();
  const stopSecond = new AbortController();
  const goingOn = second.run(later, stopSecond.signal, () => undefined);
  goingOn.catch(() => undefined);
  while ((await status("wf_twice/agent/1")) !== "ENQUEUED") await sleep(50);
  stopSecond.abort();
  await expect(goingOn).rejects.toThrow();
}, 60_000);

test("a coordinator whose process is gone (same host) is taken over at once by the next coordinator of its run", async () => {
  const url = fleet.pg.urlFor("gone_coordinator");
  const next = dbosCoordinator(url);
  onTestFinished(() => next.close());
  await next.ready();
  const db = new pg.Client({ connectionString: url });
  db.on("error", () => undefined);
  await db.connect();
  onTestFinished(() => db.end());
  const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout; // exited: its PID names no process
  await db.query("INSERT INTO pi_flow.coordinators (root, instance, host, pid) VALUES ('wf_killed', 'dead', $1, $2)", [hostname(), Number(gone)]);
  const stop = new AbortController();
  const running = next.run(childRequest("killed"), stop.signal, () => undefined);
  running.catch(() => undefined);
  const holder = async () => (await db.query<{ instance: string }>("SELECT instance FROM pi_flow.coordinators WHERE root = 'wf_killed'")).rows[0]?.instance;
  while ((await holder()) === "dead") await sleep(50);
  expect(await holder()).not.toBeUndefined();
  stop.abort();
  await expect(running).rejects.toThrow();
}, 60_000);

test("a coordinator that closes while a child of its run waits gives the run up: another coordinator of the same process takes it on at once", async () => {
  const url = fleet.pg.urlFor("closed_coordinator");
  const closing = dbosCoordinator(url);
  const next = dbosCoordinator(url);
  onTestFinished(() => next.close());
  await closing.ready();
  const db = new pg.Client({ connectionString: url });
  db.on("error", () => undefined);
  await db.connect();
  onTestFinished(() => db.end());
  const status = async (id: string) => (await db.query<{ status: string }>("SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1", [id])).rows[0]?.status;
  closing.run(childRequest("closed"), new AbortController().signal, () => undefined).catch(() => undefined); // its wait ends with its connections
  while ((await status("wf_closed/agent/0")) !== "ENQUEUED") await sleep(50);
  await closing.close();
  const stop = new AbortController();
  const running = next.run(childRequest("closed", { workflowId: "wf_closed/agent/1" }), stop.signal, () => undefined);
  running.catch(() => undefined);
  while ((await status("wf_closed/agent/1")) !== "ENQUEUED") await sleep(50);
  stop.abort();
  await expect(running).rejects.toThrow();
}, 60_000);

test("a worker cancels a delegation whose coordinator's claim is silent only once it has seen that silence unchanged for a while of its own: after a database outage every claim looks silent, and a coordinator that beats again keeps its child; a killed coordinator's claim goes after 15 minutes", async () => {
  const url = fleet.pg.urlFor("orphan_sweep");
  const coordinator = dbosCoordinator(url);
  onTestFinished(() => coordinator.close());
  await coordinator.ready(); // the database is made
  const db = testPool(url, 1);
  db.on("error", () => undefined);
  onTestFinished(() => db.end());
  // A real coordinator's delegation, waiting on the queue (no worker runs): its claim beats every 2 s.
  const waiting = coordinator.run(childRequest("beating", { workflowId: "wf_beating/delegate" }), new AbortController().signal, () => undefined);
  waiting.catch(() => undefined);
  const status = async (id: string) => (await db.query<{ status: string }>("SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1", [id])).rows[0]?.status;
  while ((await status("wf_beating/delegate")) !== "ENQUEUED") await sleep(50);
  // As the database looks just after an outage: the claim, and the child, older than the bound.
  const age = async () => {
    await db.query("UPDATE pi_flow.coordinators SET seen_at = now() - interval '1 hour' WHERE root = 'wf_beating'");
    await db.query("UPDATE dbos.workflow_status SET created_at = created_at - 3600000 WHERE workflow_uuid = 'wf_beating/delegate'");
  };
  await age();
  // A worker that watches a silence for a minute (however slow this machine, the beat comes first).
  const sweep = orphanSweep(db, { seenMs: 60_000 });
  expect(await sweep()).toEqual([]); // seen silent: not cancelled yet
  expect(await sweep()).toEqual([]); // still within the time a live coordinator has to beat
  // The coordinator beats again (the database is back) within that time: its child stays.
  while ((await db.query("SELECT 1 FROM pi_flow.coordinators WHERE root = 'wf_beating' AND seen_at > now() - interval '1 minute'")).rowCount === 0) await sleep(100);
  expect(await sweep()).toEqual([]);
  expect(await status("wf_beating/delegate")).toBe("ENQUEUED");
  // Its coordinator closes with the child still waiting (its claim goes, as a killed one's goes silent): once that is seen long enough, the child is cancelled.
  await coordinator.close();
  await age();
  const quick = orphanSweep(db, { seenMs: 1000 }); // a second of this worker's time, not the 4 s a worker takes
  expect(await quick()).toEqual([]);
  const seenAt = Date.now();
  while (Date.now() - seenAt < 1000) await sleep(100);
  expect(await quick()).toEqual(["wf_beating/delegate"]);
  expect(await status("wf_beating/delegate")).toBe("CANCELLED");
  // A killed coordinator's claim goes at a worker's sweep once silent 15 minutes; one heard from since stays.
  await db.query("INSERT INTO pi_flow.coordinators (root, instance, host, pid, seen_at) VALUES ('wf_killed', 'dead', 'h', 1, now() - interval '16 minutes'), ('wf_recent', 'live', 'h', 1, now() - interval '14 minutes')");
  await deleteSilentClaims(db);
  expect((await db.query("SELECT root FROM pi_flow.coordinators WHERE root IN ('wf_killed', 'wf_recent')")).rows).toEqual([{ root: "wf_recent" }]);
}, 120_000);
