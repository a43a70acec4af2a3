/**
 * A `flow worker` whose database holds one of its queries (a lock another session keeps, as a
 * stalled peer or a hostile one would): the server cancels the statement at its statement_timeout,
 * the child fails saying so, and the worker goes on and stops when told, instead of waiting forever.
 * A real worker on the tests' own Postgres; the test's own session holds the lock.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import { DBOS_APPLICATION } from "../../src/backends/names.ts";
import { dbosUrl } from "../../src/backends/dbos-load.ts";
import { FAUX_EXTENSION, PROJECT_ROOT, type RunningFlow } from "../cli/support.ts";
import { childRequest, enqueueChild, fleetFixture, installShutdownMarker, WORKER_PROFILE } from "../support/fleet.ts";

const fleet = fleetFixture();
const STEER_MODEL = join(PROJECT_ROOT, "test", "fixtures", "fleet", "steer-model.ts");

test("a query the database holds past its statement_timeout fails the worker's child naming it, and the worker goes on and stops when told", async () => {
  // The URL's own statement_timeout wins over the 30 s default: the test need not wait half a minute.
  const databaseUrl = `${fleet.pg.urlFor("stalled_query")}?statement_timeout=2000`;
  const worker = fleet.startWorker("w1", databaseUrl, ["--stub"]);
  await worker.stdoutText(/worker w1 ready/);
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());

  // The test's session takes the table where DBOS checkpoints a child's step, and keeps it.
  const locker = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  onTestFinished(() => locker.end());
  // DBOS's connections open with the URL's statement_timeout and DBOS's idle-in-transaction bound (set at connect, not by a query of DBOS's).
  const asDbos = new pg.Client({ connectionString: dbosUrl(databaseUrl) });
  await asDbos.connect();
  const bounds = await asDbos.query("SELECT current_setting('statement_timeout') AS statement, current_setting('idle_in_transaction_session_timeout') AS idle");
  await asDbos.end();
  expect(bounds.rows).toEqual([{ statement: "2s", idle: "1min" }]);
  await locker.query("BEGIN");
  await locker.query("LOCK TABLE dbos.operation_outputs IN ACCESS EXCLUSIVE MODE");
  const held = await enqueueChild(client, childRequest("held"));
  const failed = await worker.stdoutText(/failed wf_held\/agent\/0 run ag_held: .*\n/);
  expect(failed).toMatch(/The database did not answer worker w1 for child wf_held\/agent\/0 within its statement_timeout \(30 s unless the database URL sets one\)/);
  await locker.query("ROLLBACK");
  await expect(held.getResult()).rejects.toThrow(/did not answer worker w1 .*statement_timeout/);

  // Its connections are usable still: the next child runs.
  const next = await enqueueChild(client, childRequest("next"));
  expect((await next.getResult()).result.outcome).toBe("succeeded");
  worker.child.kill("SIGTERM");
  const stopped = await worker.done;
  expect(stopped.code).toBe(0);
  expect(stopped.stdout).toContain("worker w1 stopped (SIGTERM)");
}, 180_000);

/** The worker (and its database) the test below leaves running for the one after it. */
const unrecorded: { worker?: RunningFlow; databaseUrl: string } = { databaseUrl: "" };

test("a child whose end DBOS could not record (its status row held past the statement_timeout) is not left pending: the worker puts it back, and it answers from its saved session", async () => {
  const databaseUrl = (unrecorded.databaseUrl = `${fleet.pg.urlFor("unrecorded_end")}?statement_timeout=2000`);
  const release = join(fleet.sandbox.root, "unrecorded-release");
  // "Hold still" waits for good: the next test's child, on this same worker.
  fleet.sandbox.fauxRules([
    { match: "Hold on", answer: "held", waitFor: release },
    { match: "Hold still", answer: "still", waitFor: join(fleet.sandbox.root, "never-written") },
  ]);
  // A sweep every 500 ms (5 s by default): the requeue below comes that much sooner.
  const worker = fleet.start(["worker", "--name", "u1", "--cwd", fleet.project, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION], {
    PI_FLOW_DATABASE_URL: databaseUrl,
    PI_FLOW_WORKER_SWEEP_MS: "500",
  });
  await worker.stdoutText(/worker u1 ready/);
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const held = await enqueueChild(client, childRequest("unrecorded", { prompt: "Hold on." }));
  await worker.stdoutText(/started wf_unrecorded\/agent\/0/);

  // While the child runs, the test's session locks its status row: DBOS's checkpoint of the step,
  // then its own write of the child's failure, wait on it until the server cancels each.
  const locker = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  onTestFinished(() => locker.end());
  await locker.query("BEGIN");
  await locker.query("SELECT 1 FROM dbos.workflow_status WHERE workflow_uuid = 'wf_unrecorded/agent/0' FOR UPDATE");
  writeFileSync(release, "");
  await worker.stdoutText(/failed wf_unrecorded\/agent\/0 run ag_unrecorded: .*statement_timeout/);
  const waiting = async () =>
    (await locker.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%workflow_status%'")).rows[0]!.n;
  while ((await waiting()) === 0) await sleep(20); // DBOS writes the failure...
  while ((await waiting()) > 0) await sleep(20); // ...and the server cancels it
  await locker.query("ROLLBACK");

  // Nothing of DBOS writes it again: the worker's sweep finds it still pending under its name and puts it back.
  const requeued = await worker.stdoutText(/requeued .*\n/);
  expect(requeued).toContain("requeued wf_unrecorded/agent/0: the database did not record their end");
  expect((await held.getResult()).result).toMatchObject({ outcome: "succeeded", value: "held" });
  unrecorded.worker = worker; // the next test stops it
}, 180_000);

test("a worker stopped while the database refuses to put its running child back keeps its row, for another worker's sweep to take the child over", async () => {
  const { worker, databaseUrl } = unrecorded;
  if (!worker) throw new Error("the test above starts the worker; it did not get that far");
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  await enqueueChild(client, childRequest("handback", { prompt: "Hold still." }));
  await worker.stdoutText(/started wf_handback\/agent\/0/);

  // The test's session holds the child's status row: the stopping worker's resume of it is cancelled.
  const locker = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  onTestFinished(() => locker.end());
  await locker.query("BEGIN");
  await locker.query("SELECT 1 FROM dbos.workflow_status WHERE workflow_uuid = 'wf_handback/agent/0' FOR UPDATE");
  worker.child.kill("SIGTERM");
  unrecorded.worker = undefined;
  expect((await worker.done).code).not.toBe(0);
  await locker.query("ROLLBACK");
  // Its row stays: once silent, a sweep claims it and puts the child back (test/backends/takeover.test.ts).
  expect((await locker.query("SELECT name FROM pi_flow.workers")).rows).toEqual([{ name: "u1" }]);
  const { rows } = await locker.query("SELECT status, executor_id FROM dbos.workflow_status WHERE workflow_uuid = 'wf_handback/agent/0'");
  expect(rows).toEqual([{ status: "PENDING", executor_id: "u1" }]);
}, 180_000);

/**
 * Stops every process of the test's Postgres server (SIGSTOP), as a network split with no reset
 * looks from a client: connections stay open and nothing answers. Returns what starts it again.
 */
async function freezeDatabase(db: pg.Client): Promise<() => void> {
  const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")[1]);
  const { rows } = await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const postmaster = parentOf(rows[0]!.pid);
  const children = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return parentOf(pid) === postmaster;
      } catch {
        return false; // ended meanwhile
      }
    });
  const all = [postmaster, ...children];
  for (const pid of all) process.kill(pid, "SIGSTOP");
  return () => {
    for (const pid of all) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // ended
      }
    }
  };
}

test("a worker stopped while its database stops answering (a network split) exits non-zero within its bound, naming the child it did not hand back, and its row stays for a sweep", async () => {
  // connect_timeout bounds each step of the stop that waits on the database: 2 s, not the default 10 s.
  const databaseUrl = `${fleet.pg.urlFor("split_stop")}?connect_timeout=2`;
  fleet.sandbox.fauxRules([{ match: "Hold fast", answer: "fast", waitFor: join(fleet.sandbox.root, "split-never-written") }]);
  const worker = fleet.start(["worker", "--name", "s1", "--cwd", fleet.project, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION], { PI_FLOW_DATABASE_URL: databaseUrl });
  await worker.stdoutText(/worker s1 ready/);
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  try {
    await enqueueChild(client, childRequest("split", { prompt: "Hold fast." }));
  } finally {
    await client.destroy();
  }
  await worker.stdoutText(/started wf_split\/agent\/0/);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  // The child's prompt is checkpointed: it waits on its model, not on the database (a child still
  // reading its saved session when the database stops would hold the stop for its 10 s settle).
  while ((await db.query("SELECT 1 FROM pi_flow.child_sessions WHERE workflow_id = 'wf_split/agent/0'")).rowCount === 0) await sleep(20);
  const thaw = await freezeDatabase(db);
  let stopped;
  try {
    worker.child.kill("SIGTERM");
    stopped = await worker.done;
  } finally {
    thaw();
  }
  expect(stopped.code).toBe(1);
  expect(stopped.stderr).toContain(
    "flow worker s1 stopped without handing back its children (wf_split/agent/0): the database did not answer within 2 s. Its row stays in pi_flow.workers: once it is silent for 20 s, another worker's sweep puts them back on the queue. (failed)",
  );
  expect(stopped.stdout).not.toContain("worker s1 stopped");
  expect((await db.query("SELECT name FROM pi_flow.workers")).rows).toEqual([{ name: "s1" }]);
  expect((await db.query("SELECT status, executor_id FROM dbos.workflow_status WHERE workflow_uuid = 'wf_split/agent/0'")).rows).toEqual([{ status: "PENDING", executor_id: "s1" }]);
}, 90_000);

/** The processes whose command line holds `text` (a child's bash, found by the file it waits on), not ended. */
function processesWith(text: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const state = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0];
        return state !== "Z" && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text);
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

test("a worker whose DBOS shutdown does not finish still stops its children as a stop does (their extensions told, their commands ended) before it exits, and answers nothing for them", async () => {
  const databaseUrl = `${fleet.pg.urlFor("held_shutdown")}?connect_timeout=2`;
  const release = join(fleet.sandbox.root, "held-shutdown-release"); // never written: the child's bash waits on it
  const marker = join(fleet.sandbox.root, "held-shutdown-marker");
  installShutdownMarker(fleet.sandbox); // notes the end of a session that holds a prompt (a child's)
  const args = ["worker", "--name", "s2", "--cwd", fleet.project, "--model", "faux/faux-1", "--extension", STEER_MODEL];
  const worker = fleet.start(args, { PI_FLOW_DATABASE_URL: databaseUrl, FLOW_STEER_RELEASE: release, FLOW_SHUTDOWN_MARKER: marker });
  await worker.stdoutText(/worker s2 ready/);
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  try {
    await enqueueChild(client, childRequest("held", { profile: WORKER_PROFILE, prompt: "Wait for it." }));
  } finally {
    await client.destroy();
  }
  await worker.stdoutText(/started wf_held\/agent\/0/);
  while (processesWith(release).length === 0) await sleep(50); // the child's bash is running
  // The test's session holds DBOS's table: the worker's queue poll waits on it, and so DBOS's shutdown.
  const locker = new pg.Client({ connectionString: databaseUrl });
  const db = new pg.Client({ connectionString: databaseUrl });
  await Promise.all([locker.connect(), db.connect()]);
  onTestFinished(async () => void (await Promise.all([locker.end(), db.end()])));
  await locker.query("BEGIN");
  await locker.query("LOCK TABLE dbos.workflow_status IN ACCESS EXCLUSIVE MODE");
  // DBOS's own statement, not the worker's look for steers (which reads the same table).
  const waiting = async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = 'held_shutdown' AND query NOT LIKE '%pi_flow.%'")).rows[0]!.n;
  while ((await waiting()) === 0) await sleep(20); // the queue's poll waits on the lock
  worker.child.kill("SIGTERM");
  const stopped = await worker.done;
  await locker.query("ROLLBACK");
  expect(stopped.code).toBe(1);
  expect(stopped.stderr, stopped.stderr).toContain("flow worker s2 stopped without handing back its children (wf_held/agent/0)");
  expect(readFileSync(marker, "utf8")).toBe("child session shut down\n");
  expect(processesWith(release)).toEqual([]);
  // Nothing of the stopped child was recorded as its answer: a sweep takes it over once the row is silent.
  expect((await locker.query("SELECT status, executor_id FROM dbos.workflow_status WHERE workflow_uuid = 'wf_held/agent/0'")).rows).toEqual([{ status: "PENDING", executor_id: "s2" }]);
}, 90_000);
