/**
 * A `flow worker` whose database holds one of its queries (a lock another session keeps, as a
 * stalled peer or a hostile one would): the server cancels the statement at its statement_timeout,
 * the child fails saying so, and the worker goes on and stops when told, instead of waiting forever.
 * A real worker on the tests' own Postgres; the test's own session holds the lock.
 */
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import { DBOS_APPLICATION } from "../../src/backends/names.ts";
import { childRequest, enqueueChild, fleetFixture } from "../support/fleet.ts";

const fleet = fleetFixture();

test("a query the database holds past its statement_timeout fails the worker's child naming it, and the worker goes on and stops when told", async () => {
  // The URL's own statement_timeout wins over the 30 s default: the test need not wait half a minute.
  const databaseUrl = `${fleet.pg.urlFor("stalled_query")}?statement_timeout=3000`;
  const worker = fleet.startWorker("w1", databaseUrl, ["--stub"]);
  await worker.stdoutText(/worker w1 ready/);
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());

  // The test's session takes the table where DBOS checkpoints a child's step, and keeps it.
  const locker = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  onTestFinished(() => locker.end());
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
