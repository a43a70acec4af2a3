/**
 * Text that comes out of the fleet's database reaches a terminal as one safe line: anyone who can
 * write to the database chooses it (a worker's name and version, a child's workflow and run IDs).
 * A real `flow worker` and `flow help` on the tests' own Postgres; the hostile rows are written
 * straight into the database, as such a writer would.
 */
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import { DBOS_APPLICATION } from "../../src/backends/names.ts";
import { flow } from "../cli/support.ts";
import { workersLine } from "../../src/backends/workers-line.ts";
import { childRequest, enqueueChild, fleetFixture } from "../support/fleet.ts";

const fleet = fleetFixture();
const DATABASE = "database_text";
/** A title change, a screen clear and a line break: what a row may carry to a terminal. */
const HOSTILE = "\u001b]0;pwned\u0007\u001b[2J\nforged line";
const ESCAPE = /[\u0000-\u0008\u000b-\u001f\u007f\u009b]/;

test("a worker prints the lines of a child whose IDs carry escapes and line breaks as one line each, with none of them", async () => {
  const databaseUrl = fleet.pg.urlFor(DATABASE);
  const worker = fleet.startWorker("w1", databaseUrl, ["--stub"]);
  await worker.stdoutText(/worker w1 ready/);
  const request = childRequest("x", { workflowId: `wf_x/agent/0${HOSTILE}`, runId: `ag_x${HOSTILE}`, task: { agent: "role:explorer", description: "Part" } });
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  try {
    await enqueueChild(client, request);
  } finally {
    await client.destroy();
  }
  const stdout = await worker.stdoutText(/settled wf_x\/agent\/0.* succeeded\n/);
  worker.child.kill("SIGTERM");
  await worker.done;
  const lines = stdout.split("\n").filter((line) => line.includes("wf_x"));
  expect(lines).toEqual([expect.stringMatching(/^started wf_x\/agent\/0.*forged line run ag_x.*forged line$/), expect.stringMatching(/^settled wf_x\/agent\/0.* succeeded$/)]);
  expect(stdout).not.toMatch(ESCAPE);
  expect(stdout).not.toMatch(/^forged line/m);
}, 120_000);

// The database, and pi-flow's tables in it, are the ones the first test's worker made.
test("flow help's workers line shows a worker row's name and version with no escape or line break", async () => {
  const databaseUrl = fleet.pg.urlFor(DATABASE);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query("INSERT INTO pi_flow.workers (name, version, concurrency) VALUES ($1, $2, 3)", [`evil${HOSTILE}`, `pi-flow@9${HOSTILE}`]);
  } finally {
    await db.end();
  }
  const help = await flow(["help"], { env: fleet.env({ PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: databaseUrl }) });
  expect(help.stdout).toMatch(/^Workers: evil.*forged line \(seen \d+s ago, up to 3 children, pi-flow@9.*forged line\)$/m);
  expect(help.stdout).not.toMatch(ESCAPE);
  expect(help.stdout).not.toMatch(/^forged line/m);
}, 120_000);

test("the workers line names the 20 workers seen last, each name and version cut to 64 characters, and counts the rest", async () => {
  const databaseUrl = fleet.pg.urlFor(DATABASE);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query("DELETE FROM pi_flow.workers");
    // Rows anyone who can write the table may add: many, with long names.
    await db.query("INSERT INTO pi_flow.workers (name, version, concurrency) SELECT 'many' || i || repeat('x', 10000), 'pi-flow@9', 3 FROM generate_series(1, 25) AS i");
  } finally {
    await db.end();
  }
  const line = (await workersLine({ kind: "dbos", databaseUrl }))!;
  const named = line.split("), ");
  expect(line.match(/ \(seen /g)).toHaveLength(20);
  expect(named[0]).toMatch(/^many\d+x+ \(seen/);
  expect(named[0]!.indexOf(" (seen")).toBe(64);
  expect(line).toMatch(/\), and 5 more$/);
}, 120_000);

test("the refusal of a database another version uses names its workers and versions as one safe line, each cut to 64 characters, the first 20 of them, whatever the rows say", async () => {
  const databaseUrl = fleet.pg.urlFor(DATABASE);
  const db = new pg.Client({ connectionString: databaseUrl });
  db.on("error", () => undefined);
  await db.connect();
  onTestFinished(() => db.end());
  try {
    await db.query("DELETE FROM pi_flow.workers");
    // Live workers of "another version", as anyone who can write the table may forge them: hostile
    // names, a huge version, many rows, seen in the future (however slowly the worker below starts).
    await db.query("INSERT INTO pi_flow.workers (name, version, concurrency, seen_at) SELECT $1 || i, $2 || repeat('v', 100000), 3, now() + interval '1 hour' FROM generate_series(1, 25) AS i", [
      `evil${HOSTILE}`,
      `pi-flow@9${HOSTILE}`,
    ]);
    const worker = fleet.startWorker("w9", databaseUrl);
    const refused = await worker.done;
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("is in use by pi-flow@9");
    expect(refused.stderr).toContain("and 5 more");
    expect(refused.stderr).not.toMatch(ESCAPE);
    expect(refused.stderr).not.toMatch(/^forged line/m);
    expect(refused.stderr.length).toBeLessThan(4000);
  } finally {
    await db.query("DELETE FROM pi_flow.workers");
  }
}, 120_000);

test("flow worker with a PI_FLOW_DATABASE_URL that is not Postgres's names that variable, and exits 2", async () => {
  const worker = fleet.startWorker("w2", "mysql://flow@db.example/flow");
  const { code, stderr } = await worker.done;
  expect(code).toBe(2);
  expect(stderr).toContain("PI_FLOW_DATABASE_URL must be a postgres:// URL");
  expect(stderr).not.toContain("flow.databaseUrl");
}, 120_000);

test("flow worker with a PI_FLOW_WORKER_SWEEP_MS outside 100..60000 ms is configuration_invalid naming that variable, and exits 2", async () => {
  const worker = fleet.start(["worker", "--name", "w3", "--cwd", fleet.project], { PI_FLOW_DATABASE_URL: fleet.pg.urlFor(DATABASE), PI_FLOW_WORKER_SWEEP_MS: "5" });
  const { code, stderr } = await worker.done;
  expect(code).toBe(2);
  expect(stderr).toContain("PI_FLOW_WORKER_SWEEP_MS must be a whole number of milliseconds from 100 to 60000; it is 5.");
}, 120_000);

test("flow worker --name longer than a coordinator reads back, or with a line break, is request_invalid before it connects, and exits 2", async () => {
  const names = ["w".repeat(129), "w1\nstarted wf_forged/agent/0", ""];
  const ended = await Promise.all(names.map((name) => fleet.start(["worker", "--name", name, "--cwd", fleet.project], { PI_FLOW_DATABASE_URL: "postgres://flow@127.0.0.1:1/none" }).done));
  for (const { code, stderr } of ended) {
    expect(code).toBe(2);
    expect(stderr).toContain("--name must be 1 to 128 characters shown as they are on one line");
    expect(stderr).toContain("(request_invalid)");
  }
}, 120_000);
