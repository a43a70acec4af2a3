/**
 * A `flow worker` stopped while its database turns connections away (taken out of service, its
 * connections ended): the stop ends as one the database did not answer does, with the typed
 * message that says its row stays for a sweep, not as an unexpected error of pg's.
 * A real worker on the tests' own Postgres; the test's own session closes the database.
 */
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import { fleetFixture } from "../support/fleet.ts";

const fleet = fleetFixture();

test("a worker whose database refuses its hand-back at a stop exits 1 saying its children were not handed back and why, and its row stays for a sweep", async () => {
  const databaseUrl = `${fleet.pg.urlFor("refused_handback")}?connect_timeout=2`;
  const worker = fleet.startWorker("r1", databaseUrl, ["--stub"]);
  await worker.stdoutText(/worker r1 ready/);
  const admin = new pg.Client({ connectionString: fleet.pg.urlFor("postgres") });
  await admin.connect();
  onTestFinished(() => admin.end());
  await admin.query("ALTER DATABASE refused_handback ALLOW_CONNECTIONS false");
  await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'refused_handback'");
  worker.child.kill("SIGTERM");
  const stopped = await worker.done;
  await admin.query("ALTER DATABASE refused_handback ALLOW_CONNECTIONS true");
  expect(stopped.code, stopped.stderr).toBe(1);
  expect(stopped.stderr).toContain('flow worker r1 stopped without handing back its children: the database refused it (database "refused_handback" is not currently accepting connections).');
  expect(stopped.stderr).not.toContain("unexpected error");
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  expect((await db.query("SELECT name FROM pi_flow.workers")).rows).toEqual([{ name: "r1" }]);
}, 90_000);
