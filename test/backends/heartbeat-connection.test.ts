/**
 * A worker's heartbeat is not queued behind its children's database writes: while the session
 * checkpoints of all its children wait on the database (here, rows another session is inserting
 * and has not committed), its heartbeat goes on, so the other workers do not take it for dead and
 * run its children a second time. A real worker running pi children on Pi's faux model, the tests'
 * own Postgres, and the test's own session holding the rows.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import { DBOS_APPLICATION } from "../../src/backends/names.ts";
import type { RemoteChildRequest } from "../../src/backends/remote-child.ts";
import { FAUX_EXTENSION } from "../cli/support.ts";
import { childRequest, enqueueChild, fleetFixture, WORKER_PROFILE } from "../support/fleet.ts";

const fleet = fleetFixture();

const request = (n: number): RemoteChildRequest =>
  childRequest(`beat${n}`, { profile: WORKER_PROFILE, task: { agent: "role:worker", description: `Held part ${n}` }, prompt: "Hold on." });

test("a worker whose children's checkpoints all wait on the database still beats", async () => {
  const databaseUrl = fleet.pg.urlFor("heartbeat_connection");
  const release = join(fleet.sandbox.root, "release");
  fleet.sandbox.fauxRules([{ match: "Hold on", answer: "held", waitFor: release }]);
  const worker = fleet.start(["worker", "--name", "b1", "--concurrency", "2", "--cwd", fleet.project, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION], {
    PI_FLOW_DATABASE_URL: databaseUrl,
  });
  await worker.stdoutText(/worker b1 ready/);

  // The test's session inserts each child's first session entry and does not commit: the worker's
  // first checkpoint of each child waits on it.
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  onTestFinished(() => holder.end());
  await holder.query("BEGIN");
  await holder.query("INSERT INTO pi_flow.child_sessions (workflow_id, seq, worker, entry) VALUES ('wf_beat1/agent/0', 0, 'x', '{}'), ('wf_beat2/agent/0', 0, 'x', '{}')");
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const handles = await Promise.all([1, 2].map((n) => enqueueChild(client, request(n))));

  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  const waiting = async () =>
    (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO pi_flow.child_sessions%'")).rows[0]!.n;
  const seen = async () => (await db.query<{ at: Date }>("SELECT seen_at AS at FROM pi_flow.workers WHERE name = 'b1'")).rows[0]!.at.getTime();
  while ((await waiting()) < 2) await sleep(50); // both checkpoints wait on the held rows
  const blocked = await seen();
  // Two heartbeats later (one every 2 s), the checkpoints still wait, and the row says the worker is alive.
  while ((await seen()) - blocked < 4000 && (await waiting()) === 2) await sleep(100);
  expect(await waiting()).toBe(2);
  expect((await seen()) - blocked).toBeGreaterThanOrEqual(4000);

  await holder.query("ROLLBACK");
  writeFileSync(release, "");
  for (const handle of handles) expect((await handle.getResult()).result).toMatchObject({ outcome: "succeeded", value: "held" });
  worker.child.kill("SIGTERM");
  expect((await worker.done).code).toBe(0);
}, 180_000);
