/**
 * A worker's name is its DBOS executor ID, and DBOS recovers every unfinished child of that ID when
 * a worker of the name launches. A second live `flow worker` of one name is refused, so it neither
 * runs the first one's child again nor keeps the first one's heartbeat alive for it; a worker
 * restarted under the name of one that was killed still takes over what that one was running.
 * Real workers on a faux model (test/fixtures/fleet/steer-model.ts: the child waits in bash until
 * the release file exists) and the tests' own Postgres.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import { CHILD_QUEUE, CHILD_WORKFLOW, DBOS_APPLICATION } from "../../src/backends/names.ts";
import { PROJECT_ROOT, type RunningFlow } from "../cli/support.ts";
import { childRequest, enqueueChild, fleetFixture, WORKER_PROFILE } from "../support/fleet.ts";

const fleet = fleetFixture();
const STEER_MODEL = join(PROJECT_ROOT, "test", "fixtures", "fleet", "steer-model.ts");

const request = childRequest("twin", { profile: WORKER_PROFILE, task: { agent: "role:worker", description: "Twin part" }, prompt: "Do the part." });

test("a second live worker of one name is refused before it runs the first one's child; one restarted under a killed worker's name takes its child over", async () => {
  const databaseUrl = fleet.pg.urlFor("worker_name");
  const release = join(fleet.sandbox.root, "release");
  const startTwin = (): RunningFlow =>
    fleet.start(["worker", "--name", "twin", "--concurrency", "1", "--cwd", fleet.project, "--model", "faux/faux-1", "--extension", STEER_MODEL], {
      PI_FLOW_DATABASE_URL: databaseUrl,
      FLOW_STEER_RELEASE: release,
    });
  const first = startTwin();
  await first.stdoutText(/worker twin ready/);
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const handle = await enqueueChild(client, request);
  await first.stdoutText(/started wf_twin\/agent\/0 run ag_twin/); // waiting in bash for the release file

  const second = startTwin();
  const ended = await Promise.race([second.done, second.stdoutText(/worker twin ready/).then(() => "came up")]);
  expect(ended).toMatchObject({ code: 2, stdout: "" });
  const { stderr } = await second.done;
  expect(stderr).toContain("waiting to see whether it is still running");
  expect(stderr).toMatch(/Another flow worker named twin is running on this database .*Give each worker its own --name .*\(configuration_invalid\)/);

  // The first is killed; a worker restarted under its name (its silence aged, as 20 s would) continues its child.
  first.child.kill("SIGKILL");
  await first.done;
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  await db.query("UPDATE pi_flow.workers SET seen_at = now() - interval '1 hour' WHERE name = 'twin'");
  const third = startTwin();
  await third.stdoutText(/started wf_twin\/agent\/0 run ag_twin/);
  writeFileSync(release, "");
  expect((await handle.getResult()).result).toMatchObject({ outcome: "succeeded", value: "heard nothing" });
  third.child.kill("SIGTERM");
  expect((await third.done).code).toBe(0);
  expect((await db.query("SELECT count(*)::int AS n FROM pi_flow.workers WHERE name = 'twin'")).rows).toEqual([{ n: 0 }]);
}, 240_000);

test("a worker whose name another process took while it was not heard from stops by itself, hands back nothing of the other's, and says why", async () => {
  const databaseUrl = fleet.pg.urlFor("worker_name");
  const worker = fleet.startWorker("split", databaseUrl, ["--stub"]);
  await worker.stdoutText(/worker split ready/);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  // It was cut off from the database past the silence, and a worker restarted under its name took
  // the name, and runs a child under it (DBOS marks it PENDING under the executor "split").
  await db.query("INSERT INTO dbos.workflow_status (workflow_uuid, status, name, queue_name, executor_id) VALUES ('wf_split/agent/0', 'PENDING', $1, $2, 'split')", [CHILD_WORKFLOW, CHILD_QUEUE]);
  await db.query("UPDATE pi_flow.workers SET instance = 'the-other-process' WHERE name = 'split'");
  const stopped = await worker.done;
  expect(stopped.code).toBe(1);
  expect(stopped.stderr).toContain("flow worker split stopped: another flow worker took the name split while this one was not heard from for 20 s");
  // The other's child stays its, running: put back on the queue by this one's stop, it would run twice.
  expect((await db.query("SELECT status, executor_id FROM dbos.workflow_status WHERE workflow_uuid = 'wf_split/agent/0'")).rows).toEqual([{ status: "PENDING", executor_id: "split" }]);
  expect((await db.query("SELECT instance FROM pi_flow.workers WHERE name = 'split'")).rows).toEqual([{ instance: "the-other-process" }]);
}, 120_000);
