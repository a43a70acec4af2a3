/**
 * pi_flow.steers on the tests' own Postgres: a steer a worker took but could not hand to its child
 * goes back in its old place, for the child's coordinator to report as not delivered; one no
 * coordinator came for goes with the settled child's other rows at the sweep.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import { DBOS_APPLICATION } from "../../src/backends/names.ts";
import { PROJECT_ROOT } from "../cli/support.ts";
import { dbosCoordinator } from "../../src/backends/dbos-coordinator.ts";
import { MAX_WORKER_NAME_CHARS, readChildStatuses } from "../../src/backends/child-watch.ts";
import { childRequest, enqueueChild, fleetFixture, testPool, WORKER_PROFILE } from "../support/fleet.ts";
import { deleteSettledSessions } from "../../src/backends/child-sessions.ts";
import { loadDbos, migrate } from "../../src/backends/dbos-load.ts";
import { letGoSteers, sendSteer, settleSteers, takeSteers, unreadSteers } from "../../src/backends/steers.ts";
import { watchRunningChildren, type RunningChild } from "../../src/backends/running-watch.ts";
import { sessionCheckpoints } from "../../src/backends/session-checkpoint.ts";
import { SteeringInbox } from "../../src/harnesses/steering.ts";

const fleet = fleetFixture();

test("steers a worker could not hand over wait again in order, for the coordinator to take; the sweep deletes those of a child settled long ago", async () => {
  const url = fleet.pg.urlFor("fleet_steers");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 1);
  try {
    const taker = { worker: "w1", instance: "i1" };
    const take = async () => (await takeSteers(pool, ["wf_1/agent/0"], undefined, { taker })).taken;
    for (const message of ["first", "second"]) await sendSteer(pool, "wf_1/agent/0", message);
    const taken = await take();
    expect(taken.map((steer) => steer.message)).toEqual(["first", "second"]);
    expect(await take()).toEqual([]); // taken once, though the rows stay until saved
    await sendSteer(pool, "wf_1/agent/0", "third"); // sent while the worker held the first two
    // The child had ended: the worker lets go what it took, in place.
    await letGoSteers(pool, taker.instance, taken);
    expect((await take()).map((steer) => steer.message)).toEqual(["first", "second", "third"]);
    // The child ends having read the first two: their rows go, and the one it never read is written back, last.
    await sendSteer(pool, "wf_1/agent/0", "fourth");
    await settleSteers(pool, "wf_1/agent/0", taker.instance, ["third"]);
    expect((await takeSteers(pool, ["wf_1/agent/0"], undefined, { refusedToo: true })).taken.map((steer) => steer.message)).toEqual(["fourth", "third"]);
    // A worker taken for dead that is alive still (a network split) takes none of a child DBOS has another run: no steer goes to both.
    await pool.query("INSERT INTO dbos.workflow_status (workflow_uuid, status, executor_id) VALUES ('wf_split/agent/0', 'PENDING', 'w2')");
    await sendSteer(pool, "wf_split/agent/0", "for the live one");
    expect((await takeSteers(pool, ["wf_split/agent/0"], undefined, { taker })).taken).toEqual([]);
    const live = await takeSteers(pool, ["wf_split/agent/0"], undefined, { taker: { worker: "w2", instance: "i2" } });
    expect(live.taken.map((steer) => steer.message)).toEqual(["for the live one"]);

    const now = "(EXTRACT(EPOCH FROM now()) * 1000)::bigint";
    await pool.query(`INSERT INTO dbos.workflow_status (workflow_uuid, status, updated_at) VALUES ('wf_long/agent/0', 'SUCCESS', ${now} - 1200000), ('wf_busy/agent/0', 'PENDING', ${now})`);
    await sendSteer(pool, "wf_long/agent/0", "nobody came");
    await sendSteer(pool, "wf_busy/agent/0", "still wanted");
    await deleteSettledSessions(pool);
    expect((await pool.query("SELECT workflow_id, message FROM pi_flow.steers ORDER BY seq")).rows).toEqual([
      { workflow_id: "wf_split/agent/0", message: "for the live one" }, // its child runs: taken, not saved yet
      { workflow_id: "wf_busy/agent/0", message: "still wanted" },
    ]);
  } finally {
    await pool.end();
  }
}, 120_000);

test("steer rows forged larger than a read takes are measured by the server and left as written: the coordinator's reads fail naming the bound, a worker takes the other children's", async () => {
  const url = fleet.pg.urlFor("fleet_steer_size");
  const limit = 1000;
  const coordinator = dbosCoordinator(url, { maxSteerBytes: limit });
  await coordinator.ready();
  const pool = testPool(url, 1);
  try {
    const forged = "x".repeat(limit + 1);
    await sendSteer(pool, "wf_big/agent/0", "small first");
    await sendSteer(pool, "wf_big/agent/0", forged);
    await sendSteer(pool, "wf_ok/agent/0", "fine");
    const tooLarge = `The steers waiting in the database for wf_big/agent/0 come to ${limit + 12} bytes, over the ${limit} bytes pi-flow reads at once: not read.`;
    // The coordinator's look at what the child has not read, and its take once the answer is in.
    await expect(coordinator.unreadSteers("wf_big/agent/0")).rejects.toThrow(tooLarge);
    const noted: string[] = [];
    await expect(coordinator.takeUndeliveredSteers("wf_big/agent/0", (messages) => noted.push(...messages))).rejects.toMatchObject({ code: "failed", message: expect.stringContaining(tooLarge) });
    expect(noted).toEqual([]);
    // A saved copy of handed-over steers counts too.
    await pool.query("INSERT INTO pi_flow.child_session_steers (workflow_id, messages) VALUES ('wf_saved/agent/0', $1)", [JSON.stringify([forged])]);
    await expect(unreadSteers(pool, "wf_saved/agent/0", limit)).rejects.toThrow("over the 1000 bytes pi-flow reads at once");
    // The worker's take: the other child's steer arrives, the large one is named and stays.
    const take = await takeSteers(pool, ["wf_big/agent/0", "wf_ok/agent/0"], limit);
    expect(take.taken.map((steer) => steer.message)).toEqual(["fine"]);
    expect(take.tooLarge.map((error) => error.message)).toEqual([expect.stringContaining(tooLarge)]);
    const left = await pool.query<{ message: string }>("SELECT message FROM pi_flow.steers WHERE workflow_id = 'wf_big/agent/0' ORDER BY seq");
    expect(left.rows.map((row) => row.message)).toEqual(["small first", forged]);
    // Under the bound, the same reads work as before.
    expect(await unreadSteers(pool, "wf_big/agent/0", 2 * limit)).toEqual(["small first", forged]);
  } finally {
    await pool.end();
    await coordinator.close();
  }
}, 120_000);

test("a worker name forged into a child's status row reaches its coordinator cut to 128 characters by the server", async () => {
  const url = fleet.pg.urlFor("fleet_steer_size");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 1);
  try {
    await pool.query("INSERT INTO dbos.workflow_status (workflow_uuid, status, executor_id) VALUES ('wf_named/agent/0', 'PENDING', repeat('w', 100000))");
    expect(await readChildStatuses(pool)(["wf_named/agent/0"])).toEqual([{ workflowID: "wf_named/agent/0", status: "PENDING", executorId: "w".repeat(MAX_WORKER_NAME_CHARS) }]);
  } finally {
    await pool.end();
  }
}, 120_000);

test("a child whose workflow row is deleted while its coordinator waits fails saying so, instead of waiting forever", async () => {
  const url = fleet.pg.urlFor("fleet_deleted");
  const coordinator = dbosCoordinator(url);
  // A client, not a pool: its end waits for the connection to close, so the cluster's stop after the
  // file cannot reach it half-closed (an unhandled "terminating connection" error).
  const db = new pg.Client({ connectionString: url });
  db.on("error", () => undefined);
  await coordinator.ready(); // the database is made
  await db.connect();
  try {
    // No worker runs: the child waits on the queue until someone deletes its row.
    const running = coordinator.run(childRequest("deleted"), new AbortController().signal, () => undefined);
    running.catch(() => undefined);
    const status = async () => (await db.query<{ status: string }>("SELECT status FROM dbos.workflow_status WHERE workflow_uuid = 'wf_deleted/agent/0'").catch(() => ({ rows: [] }))).rows[0]?.status;
    while ((await status()) !== "ENQUEUED") await sleep(50);
    await db.query("DELETE FROM dbos.workflow_status WHERE workflow_uuid = 'wf_deleted/agent/0'");
    await expect(running).rejects.toThrow("The child's workflow wf_deleted/agent/0 is no longer in the database (its row was deleted before it ended)");
  } finally {
    await db.end();
    await coordinator.close();
  }
}, 120_000);


test("a steer handed to a child whose save failed is not lost when its worker stops: it waits in the table, where the worker that takes the child over takes it, also when the database refuses to let it go", async () => {
  const url = fleet.pg.urlFor("fleet_handback");
  const release = join(fleet.sandbox.root, "handback-release");
  const model = ["--model", "faux/faux-1", "--extension", join(PROJECT_ROOT, "test", "fixtures", "fleet", "steer-model.ts")];
  const worker = fleet.start(["worker", "--name", "h1", "--cwd", fleet.project, ...model], { PI_FLOW_DATABASE_URL: url, FLOW_STEER_RELEASE: release });
  await worker.stdoutText(/worker h1 ready/);
  const client = await DBOSClient.create({ systemDatabaseUrl: url, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const pool = testPool(url, 1);
  onTestFinished(() => pool.end());
  // The database refuses to save a child's unread steers (a trigger of the test's own): the checkpoint that saves a steer fails.
  await pool.query("CREATE FUNCTION pi_flow.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$");
  await pool.query("CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON pi_flow.child_session_steers FOR EACH ROW EXECUTE FUNCTION pi_flow.refuse()");
  const child = (id: string) => childRequest(id, { profile: WORKER_PROFILE, task: { agent: "role:worker", description: `Part ${id}` }, prompt: "Do the part." });
  for (const id of ["handback", "refused"]) {
    await enqueueChild(client, child(id));
    await worker.stdoutText(new RegExp(`started wf_${id}/agent/0`));
    await sendSteer(pool, `wf_${id}/agent/0`, `Also check the README (${id}).`);
    await worker.stdoutText(new RegExp(`steered wf_${id}/agent/0`));
  }
  // The table refuses to let the second child's steer go as the worker stops.
  await pool.query("CREATE TRIGGER refuse_back BEFORE UPDATE OR DELETE ON pi_flow.steers FOR EACH ROW WHEN (OLD.workflow_id = 'wf_refused/agent/0') EXECUTE FUNCTION pi_flow.refuse()");
  worker.child.kill("SIGTERM");
  const { stdout } = await worker.done;
  expect(stdout).toContain("2 unfinished children handed back to the queue");
  expect(stdout).not.toContain("steers not delivered");
  // Neither saved beside the session nor delivered: still on the table, and counted unread.
  const left = await pool.query("SELECT workflow_id, message, taken_by IS NULL AS waiting FROM pi_flow.steers ORDER BY seq");
  expect(left.rows).toEqual([
    { workflow_id: "wf_handback/agent/0", message: "Also check the README (handback).", waiting: true },
    { workflow_id: "wf_refused/agent/0", message: "Also check the README (refused).", waiting: false },
  ]);
  // The next process of h1 (another instance) takes both.
  const ids = ["wf_handback/agent/0", "wf_refused/agent/0"];
  await pool.query("DROP TRIGGER refuse_back ON pi_flow.steers");
  const { taken } = await takeSteers(pool, ids, undefined, { taker: { worker: "h1", instance: "h1 again" } });
  expect(taken.map((steer) => steer.message)).toEqual(["Also check the README (handback).", "Also check the README (refused)."]);
}, 180_000);

/** A token a user pasted into a steer (the shape GitHub gives them). */
const PASTED_TOKEN = "ghp_" + "Zq8Lw3Nv5Tb1Xc7Rm2Hk9Pd4Fs6Gj0Ya1Ue5";

test("a steer handed to a child its coordinator cancels, unread, does not stay in the table once its worker stops the child: its coordinator already said it was not delivered; one a child ends without reading that the database refuses to keep is printed by its worker, redacted", async () => {
  const url = fleet.pg.urlFor("fleet_cancel_steer");
  const release = join(fleet.sandbox.root, "cancel-release"); // written only for the second child: the first waits until cancelled
  const model = ["--model", "faux/faux-1", "--extension", join(PROJECT_ROOT, "test", "fixtures", "fleet", "steer-model.ts")];
  const worker = fleet.start(["worker", "--name", "k1", "--cwd", fleet.project, ...model], { PI_FLOW_DATABASE_URL: url, FLOW_STEER_RELEASE: release });
  await worker.stdoutText(/worker k1 ready/);
  const client = await DBOSClient.create({ systemDatabaseUrl: url, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const pool = testPool(url, 1);
  onTestFinished(() => pool.end());
  await enqueueChild(client, childRequest("cancelsteer", { profile: WORKER_PROFILE, task: { agent: "role:worker", description: "Part" }, prompt: "Do the part." }));
  await worker.stdoutText(/started wf_cancelsteer\/agent\/0/);
  await sendSteer(pool, "wf_cancelsteer/agent/0", "Also check the README.");
  await worker.stdoutText(/steered wf_cancelsteer\/agent\/0/);
  // The coordinator cancels (and, from the database, says the steer was not delivered: run-on-fleet.ts).
  while ((await unreadSteers(pool, "wf_cancelsteer/agent/0")).length === 0) await sleep(50); // saved beside its session
  await client.cancelWorkflow("wf_cancelsteer/agent/0");
  await worker.stdoutText(/settled wf_cancelsteer\/agent\/0 run ag_cancelsteer cancelled/);
  expect((await pool.query("SELECT workflow_id, message FROM pi_flow.steers")).rows).toEqual([]);

  // A child stopped by its quota of one turn before it read a steer carrying a token the user pasted;
  // the database refuses to keep the steer for its coordinator: the worker's line is its last word, a log, redacted.
  await enqueueChild(client, childRequest("lost", { profile: WORKER_PROFILE, task: { agent: "role:worker", description: "Part" }, prompt: "Do the part.", quotas: { maxTurns: 1 } }));
  await worker.stdoutText(/started wf_lost\/agent\/0/);
  await sendSteer(pool, "wf_lost/agent/0", `Also check the README. Use ${PASTED_TOKEN}`);
  await worker.stdoutText(/steered wf_lost\/agent\/0/);
  while ((await unreadSteers(pool, "wf_lost/agent/0")).length === 0) await sleep(50); // saved beside its session
  await pool.query("CREATE FUNCTION pi_flow.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$");
  await pool.query("CREATE TRIGGER refuse BEFORE INSERT ON pi_flow.steers FOR EACH ROW EXECUTE FUNCTION pi_flow.refuse()");
  writeFileSync(release, "");
  const stdout = await worker.stdoutText(/steers not delivered to wf_lost\/agent\/0 .*\n/);
  const lost = stdout.split("\n").filter((line) => line.startsWith("steers not delivered"));
  expect(lost).toEqual([expect.stringMatching(/^steers not delivered to wf_lost\/agent\/0 \(the database refused to keep them: P0001\): Also check the README\. Use \[REDACTED[^\]]*\]$/)]);
  expect(stdout).not.toContain(PASTED_TOKEN);
}, 120_000);

test("a steer for a child whose harness on the worker takes none (stub, replay) is taken once and let go marked refused, not taken and let go at every look; its coordinator still takes it as undelivered", async () => {
  const url = fleet.pg.urlFor("fleet_steer_refused");
  const coordinator = dbosCoordinator(url);
  onTestFinished(() => coordinator.close());
  await coordinator.ready();
  const pool = testPool(url, 2);
  onTestFinished(() => pool.end());
  // Every take of a steer, as the test's own trigger counts it.
  await pool.query("CREATE TABLE pi_flow.test_takes (workflow_id text NOT NULL)");
  await pool.query("CREATE FUNCTION pi_flow.count_take() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO pi_flow.test_takes VALUES (NEW.workflow_id); RETURN NEW; END $$");
  await pool.query("CREATE TRIGGER count_take AFTER UPDATE OF taken_by ON pi_flow.steers FOR EACH ROW WHEN (NEW.taken_by IS NOT NULL) EXECUTE FUNCTION pi_flow.count_take()");
  const running = new Map<string, RunningChild>();
  const stubbed = new SteeringInbox();
  stubbed.refuseAll(); // as a worker running it on --stub does
  running.set("wf_stub/agent/0", { controller: new AbortController(), steering: stubbed });
  const listening = new SteeringInbox(); // a pi child beside it: each look hands it its steers
  const checkpoints = sessionCheckpoints({ pool, workflowId: "wf_pi/agent/0", worker: "w1", saved: null, unread: () => listening.unread, onDiagnostic: () => undefined });
  running.set("wf_pi/agent/0", { controller: new AbortController(), steering: listening, checkpoints });
  let handed = () => {};
  const watch = watchRunningChildren(pool, { worker: "w1", instance: "i1" }, running, () => handed());
  onTestFinished(() => watch.stop());
  const look = () => new Promise<void>((resolve) => (handed = resolve));
  await sendSteer(pool, "wf_stub/agent/0", "Also check the README.");
  for (const n of [1, 2, 3]) {
    const looked = look();
    await sendSteer(pool, "wf_pi/agent/0", `Steer ${n}.`);
    await looked; // a look took the pi child's steer, and the stub child's with it if it was there to take
    await watch.taking();
  }
  const takes = await pool.query<{ workflow_id: string; n: number }>("SELECT workflow_id, count(*)::int AS n FROM pi_flow.test_takes GROUP BY workflow_id ORDER BY workflow_id");
  expect(takes.rows).toEqual([{ workflow_id: "wf_pi/agent/0", n: 3 }, { workflow_id: "wf_stub/agent/0", n: 1 }]);
  // Not unread (it will never be read), and not lost: its coordinator takes it when the child's answer is in.
  expect(await coordinator.unreadSteers("wf_stub/agent/0")).toEqual([]);
  // A coordinator killed as it notes it in the run: the row stays, for its run's resume to note.
  const killed = new Error("killed while writing the note");
  await expect(coordinator.takeUndeliveredSteers("wf_stub/agent/0", () => { throw killed; })).rejects.toBe(killed);
  const noted: string[] = [];
  await coordinator.takeUndeliveredSteers("wf_stub/agent/0", (messages) => noted.push(...messages));
  expect(noted).toEqual(["Also check the README."]);
  expect((await pool.query("SELECT message FROM pi_flow.steers WHERE workflow_id = 'wf_stub/agent/0'")).rows).toEqual([]);
}, 60_000);

test("a steer for a pi child whose session is still opening stays in the table until its worker can save it beside the session, where a worker killed in between would not lose it", async () => {
  const url = fleet.pg.urlFor("fleet_steer_opening");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 2);
  onTestFinished(() => pool.end());
  const running = new Map<string, RunningChild>();
  const checkpointsOf = (workflowId: string, steering: SteeringInbox) =>
    sessionCheckpoints({ pool, workflowId, worker: "w1", saved: null, unread: () => steering.unread, onDiagnostic: () => undefined });
  const opening = new SteeringInbox(); // its worker still reads what an earlier worker saved: no checkpoints yet
  running.set("wf_opening/agent/0", { controller: new AbortController(), steering: opening });
  const open = new SteeringInbox();
  running.set("wf_open/agent/0", { controller: new AbortController(), steering: open, checkpoints: checkpointsOf("wf_open/agent/0", open) });
  const waiting: Record<string, () => void> = {};
  const handedTo = (workflowId: string) => new Promise<void>((resolve) => (waiting[workflowId] = resolve));
  const watch = watchRunningChildren(pool, { worker: "w1", instance: "i1" }, running, (workflowId) => waiting[workflowId]?.());
  onTestFinished(() => watch.stop());
  await sendSteer(pool, "wf_opening/agent/0", "Also check the README.");
  const looked = handedTo("wf_open/agent/0");
  await sendSteer(pool, "wf_open/agent/0", "Steer 1.");
  await looked; // a look took the open child's steer, and would have taken the opening one's with it
  await watch.taking();
  const left = await pool.query<{ message: string }>("SELECT message FROM pi_flow.steers WHERE workflow_id = 'wf_opening/agent/0'");
  expect(left.rows.map((row) => row.message)).toEqual(["Also check the README."]);
  // Its checkpoints begin: the next look hands it over, and it is saved beside the session.
  const checkpoints = checkpointsOf("wf_opening/agent/0", opening);
  const handed = handedTo("wf_opening/agent/0");
  running.get("wf_opening/agent/0")!.checkpoints = checkpoints;
  await handed;
  await watch.taking();
  await checkpoints.drain();
  expect(await unreadSteers(pool, "wf_opening/agent/0")).toEqual(["Also check the README."]);
  expect((await pool.query("SELECT 1 FROM pi_flow.steers WHERE workflow_id = 'wf_opening/agent/0'")).rowCount).toBe(0);
}, 60_000);

test("a steer a worker took for its pi child and was still saving when the worker was killed stays in the table: the worker that takes the child over takes it again, and its coordinator counts it unread", async () => {
  const url = fleet.pg.urlFor("fleet_steer_killed");
  await migrate(await loadDbos(), url);
  // The killed worker's connections, named so that the test can end them as a killed process's end.
  const workerPool = new pg.Pool({ connectionString: url, max: 2, application_name: "killed_worker" });
  workerPool.on("error", () => undefined);
  onTestFinished(() => workerPool.end());
  const pool = testPool(url, 2);
  onTestFinished(() => pool.end());
  const id = "wf_killed/agent/0";
  const steering = new SteeringInbox();
  const checkpoints = sessionCheckpoints({ pool: workerPool, workflowId: id, worker: "w1", saved: null, unread: () => steering.unread, onDiagnostic: () => undefined });
  const running = new Map<string, RunningChild>([[id, { controller: new AbortController(), steering, checkpoints }]]);
  // A checkpoint write in flight: the save of the steer waits behind it (here, behind a lock the test holds).
  const blocker = await pool.connect();
  onTestFinished(() => blocker.release());
  await blocker.query("BEGIN");
  await blocker.query("LOCK TABLE pi_flow.child_session_steers IN EXCLUSIVE MODE");
  let handed = () => {};
  const handedOver = new Promise<void>((resolve) => (handed = resolve));
  const watch = watchRunningChildren(workerPool, { worker: "w1", instance: "i1" }, running, () => handed());
  onTestFinished(() => watch.stop());
  await sendSteer(pool, id, "Also check the README.");
  await handedOver; // the child has it in memory
  const waitingSave = "SELECT 1 FROM pg_stat_activity WHERE application_name = 'killed_worker' AND wait_event_type = 'Lock'";
  while ((await pool.query(waitingSave)).rowCount === 0) await sleep(20);
  // The worker is killed there: its looks stop, its connections end, its save never commits.
  watch.stop();
  await pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'killed_worker'");
  await blocker.query("ROLLBACK");
  await checkpoints.drain();
  expect(steering.unread).toEqual(["Also check the README."]); // what died with the worker
  // Not lost: the coordinator still counts it unread, and the worker that takes the child over takes it.
  expect(await unreadSteers(pool, id)).toEqual(["Also check the README."]);
  const takeover = await takeSteers(pool, [id], undefined, { taker: { worker: "w2", instance: "i2" } });
  expect(takeover.taken.map((steer) => steer.message)).toEqual(["Also check the README."]);
}, 60_000);

test("a secret pasted into a steer is redacted before it goes into the database, as the run's journal redacts it: the rows waiting for a worker, the ones a child ends without reading, and those saved beside its session", async () => {
  const url = fleet.pg.urlFor("fleet_steer_secret");
  const coordinator = dbosCoordinator(url);
  const db = new pg.Client({ connectionString: url });
  db.on("error", () => undefined);
  await coordinator.ready();
  await db.connect();
  const token = `ghp_${"a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"}`;
  try {
    // No worker runs: the child waits on the queue, steerable.
    const running = coordinator.run(childRequest("secret"), new AbortController().signal, () => undefined);
    running.catch(() => undefined);
    const status = async () => (await db.query<{ status: string }>("SELECT status FROM dbos.workflow_status WHERE workflow_uuid = 'wf_secret/agent/0'")).rows[0]?.status;
    while ((await status()) !== "ENQUEUED") await sleep(50);
    expect(await coordinator.steer("wf_secret/agent/0", `Push with the token ${token} please`)).toBe(true);
    await sendSteer(db, "wf_other/agent/0", `password=hunter2hunter2 ${token}`);
    // A worker's child ends without reading one: written back for its coordinator.
    await settleSteers(db, "wf_other/agent/0", "i1", [`and ${token} again`]);
    // A worker's checkpoint saves the unread beside the session.
    const inbox = new SteeringInbox();
    inbox.send(`saved ${token}`);
    const pool = testPool(url, 1);
    const checkpoints = sessionCheckpoints({ pool, workflowId: "wf_other/agent/0", worker: "w1", saved: null, unread: () => inbox.unread, onDiagnostic: () => undefined });
    checkpoints.save([]);
    await checkpoints.drain();
    await pool.end();
    const stored = (await db.query<{ text: string }>("SELECT message AS text FROM pi_flow.steers UNION ALL SELECT messages FROM pi_flow.child_session_steers")).rows.map((row) => row.text);
    expect(stored).toHaveLength(4);
    expect(stored.join("\n")).not.toContain(token);
    expect(stored.join("\n")).not.toContain("hunter2");
    expect(stored).toContain("Push with the token [REDACTED] please");
  } finally {
    await db.end();
    await coordinator.close();
  }
}, 120_000);
