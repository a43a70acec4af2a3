/**
 * What a worker saves of a pi child's session so another can continue it (the takeover itself, with
 * real processes killed, is in `npm run test:fleet`: test/fleet/takeover.fleet.ts): checkpoints in
 * the tests' own Postgres, redacted, bounded, cleared, and never a failure of the child.
 */
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { expect, test } from "vitest";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { fleetFixture, testPool } from "../support/fleet.ts";
import { appendSessionEntries, deleteSavedSession, deleteSettledSessions, loadSavedSession } from "../../src/backends/child-sessions.ts";
import { claimSilentWorkersChildren } from "../../src/backends/heartbeats.ts";
import { CHILD_QUEUE, CHILD_WORKFLOW } from "../../src/backends/names.ts";
import { deleteSettledInputs } from "../../src/backends/child-inputs.ts";
import { loadDbos, migrate } from "../../src/backends/dbos-load.ts";
import { sessionCheckpoints } from "../../src/backends/session-checkpoint.ts";
import { keepWorkerSession } from "../../src/backends/kept-session.ts";
import type { FleetChildren } from "../../src/backends/fleet.ts";
import { dbosCoordinator } from "../../src/backends/dbos-coordinator.ts";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const fleet = fleetFixture();

/** A saved session's entries as the harness hands them over: a user message, then one with `text`. */
const entries = (text: string): SessionEntry[] => [
  { type: "message", id: "u0000001", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: [{ type: "text", text: "Do it." }], timestamp: 0 } },
  { type: "message", id: "u0000002", parentId: "u0000001", timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: [{ type: "text", text }], timestamp: 1 } },
];

test("checkpoints are redacted and bounded, and a database that refuses them costs the child one diagnostic, never a failure", async () => {
  const url = fleet.pg.urlFor("fleet_checkpoints");
  await migrate(await loadDbos(), url); // DBOS's schema and pi-flow's tables, as a worker makes them
  const pool = testPool(url, 1);
  const told: string[] = [];
  try {
    let unread: string[] = ["A steer no turn read yet."];
    const place = { pool, workflowId: "wf_bounded/agent/0", worker: "w9", saved: null, unread: () => unread, onDiagnostic: (message: string) => told.push(message) };
    const checkpoints = sessionCheckpoints(place, 2000);
    const token = "ghp_" + "a1B2c3D4e5".repeat(4);
    checkpoints.save(entries(`the token is ${token}`).slice(0, 1));
    await checkpoints.drain();
    // What a worker's answer tells its coordinator to expect in the database.
    expect(checkpoints.stored()).toEqual({ entries: 1 });
    // A steer handed to the child but not read by a turn yet is saved beside the entries, then cleared once read.
    expect((await loadSavedSession(pool, "wf_bounded/agent/0"))?.steers).toEqual(["A steer no turn read yet."]);
    unread = [];
    checkpoints.save(entries(`the token is ${token}`));
    checkpoints.save([...entries(`the token is ${token}`), ...entries("x".repeat(5000)).map((entry) => ({ ...entry, id: `${entry.id}b` }))]);
    await checkpoints.drain();
    const saved = await loadSavedSession(pool, "wf_bounded/agent/0");
    expect(saved?.worker).toBe("w9");
    expect(saved?.entries).toHaveLength(2);
    expect(saved?.steers).toEqual([]);
    expect(JSON.stringify(saved?.entries)).not.toContain(token);
    expect(JSON.stringify(saved?.entries)).toContain("[REDACTED]");
    expect(told).toEqual([expect.stringContaining("passed 2000 bytes and is no longer checkpointed")]);
    // Not whole in the database: its coordinator keeps none of it, and says why.
    expect(checkpoints.stored()).toEqual({ unsaved: "it passed 2000 bytes, past which it is no longer checkpointed" });
    // Rows of a workflow that is not queued or running (here: none at all) go at the next sweep.
    await deleteSettledSessions(pool);
    expect(await loadSavedSession(pool, "wf_bounded/agent/0")).toBeNull();

    // A secret a command printed goes from the result that holds it, saved a turn after its call,
    // and after a takeover, whose worker saves the result of a call an earlier worker saved.
    const password = "Tr0ub4dor&3-horse";
    const [asked] = entries("fetch it");
    const call = (id: string): SessionEntry => ({ type: "message", id: `c-${id}`, parentId: "u0000001", timestamp: "2026-01-01T00:00:02.000Z", message: { role: "assistant", content: [{ type: "toolCall", id, name: "bash", arguments: { command: "vault kv get -field=password secret/db" } }], timestamp: 2 } } as unknown as SessionEntry);
    const result = (id: string): SessionEntry => ({ type: "message", id: `r-${id}`, parentId: `c-${id}`, timestamp: "2026-01-01T00:00:03.000Z", message: { role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text: `${password}\n` }], isError: false, timestamp: 3 } } as unknown as SessionEntry);
    const printedPlace = { pool, workflowId: "wf_printed/agent/0", unread: () => [], onDiagnostic: (message: string) => told.push(message) };
    const first = sessionCheckpoints({ ...printedPlace, worker: "w1", saved: null });
    first.save([asked!, call("t1")]);
    await first.drain();
    first.save([asked!, call("t1"), result("t1"), call("t2")]);
    await first.drain();
    const taken = sessionCheckpoints({ ...printedPlace, worker: "w2", saved: await loadSavedSession(pool, "wf_printed/agent/0") });
    taken.save([asked!, call("t1"), result("t1"), call("t2"), result("t2")]);
    await taken.drain();
    const printed = JSON.stringify((await loadSavedSession(pool, "wf_printed/agent/0"))?.entries);
    expect(printed).toContain('"toolCallId":"t2"');
    expect(printed).not.toContain(password.slice(0, 8));
  } finally {
    await pool.end();
  }

  // A database that is away: the save reports once and returns; the child is never held.
  const away = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/none", max: 1 });
  away.on("error", () => undefined);
  const refused: string[] = [];
  const checkpoints = sessionCheckpoints({ pool: away, workflowId: "wf_away/agent/0", worker: "w9", saved: null, unread: () => [], onDiagnostic: (message) => refused.push(message) });
  checkpoints.save(entries("one"));
  checkpoints.save([...entries("one"), ...entries("two").map((entry) => ({ ...entry, id: `${entry.id}c` }))]);
  await checkpoints.drain();
  expect(refused).toEqual([expect.stringMatching(/^A checkpoint of the child's Pi session could not be written \(ECONNREFUSED\); it is tried again after the next turn\.$/)]);
  expect(checkpoints.stored()).toEqual({ unsaved: "its last checkpoint could not be written (ECONNREFUSED)" });
  await away.end();
});

test("the sweep leaves a settled child's session to its coordinator for a while, then deletes it; a running child's stays", async () => {
  const url = fleet.pg.urlFor("fleet_sweep");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 1);
  try {
    // Workflows as DBOS leaves them: settled a moment ago, settled 20 minutes ago, running for an hour.
    const now = "(EXTRACT(EPOCH FROM now()) * 1000)::bigint";
    await pool.query(
      `INSERT INTO dbos.workflow_status (workflow_uuid, status, updated_at) VALUES
         ('wf_just/agent/0', 'SUCCESS', ${now}), ('wf_long/agent/0', 'SUCCESS', ${now} - 1200000), ('wf_busy/agent/0', 'PENDING', ${now} - 3600000)`,
    );
    for (const id of ["wf_just/agent/0", "wf_long/agent/0", "wf_busy/agent/0"]) await appendSessionEntries(pool, id, "w9", 0, [JSON.stringify(entries("one")[0])], []);
    await deleteSettledSessions(pool);
    expect(await loadSavedSession(pool, "wf_just/agent/0")).not.toBeNull();
    expect(await loadSavedSession(pool, "wf_busy/agent/0")).not.toBeNull();
    expect(await loadSavedSession(pool, "wf_long/agent/0")).toBeNull();
  } finally {
    await pool.end();
  }
});

test("a saved session forged larger than a read takes is measured by the server and not read: the coordinator says why it kept none, and the rows stay as written", async () => {
  const url = fleet.pg.urlFor("fleet_sweep");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 1);
  try {
    const id = "wf_forged_session/agent/0";
    const entry = JSON.stringify(entries("x".repeat(600))[1]);
    await appendSessionEntries(pool, id, "w9", 0, [JSON.stringify(entries("one")[0]), entry], ["a steer"]);
    const limit = 600; // lowered: the server need not hold much
    const bound = `The saved Pi session of ${id} is`;
    await expect(loadSavedSession(pool, id, limit)).rejects.toMatchObject({ code: "failed", message: expect.stringContaining(`bytes in the database, over the ${limit} bytes pi-flow reads: not read.`) });
    // The coordinator's copy of it into the child's run: not kept, saying why.
    const notKept: string[] = [];
    const takeSession: FleetChildren["takeSession"] = async (_id, keep) => void keep(await loadSavedSession(pool, id, limit));
    const fleetOf = { takeSession } as Pick<FleetChildren, "takeSession"> as FleetChildren;
    await keepWorkerSession(fleetOf, { workflowId: id, worker: "w9", file: "/nonexistent/session.jsonl", cwd: "/", notKept: (message) => notKept.push(message) }, { entries: 2 });
    expect(notKept).toEqual([expect.stringMatching(new RegExp(`^its Pi session was not kept from worker w9 \\(${bound.replace(/[/]/g, "\\/")} \\d+ bytes`))]);
    expect((await pool.query("SELECT count(*)::int AS n FROM pi_flow.child_sessions WHERE workflow_id = $1", [id])).rows).toEqual([{ n: 2 }]);
    expect((await loadSavedSession(pool, id))?.entries).toHaveLength(2); // under the real bound it reads as before
  } finally {
    await pool.end();
  }
});

test("a saved session's rows forged with a huge worker name, or by the thousand with empty entries, are not read whole: the name comes back cut to 128 characters, and rows past what a read takes are refused naming the bound", async () => {
  const url = fleet.pg.urlFor("fleet_sweep");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 1);
  try {
    const named = "wf_forged_worker/agent/0";
    const [first, second] = entries("one").map((entry) => JSON.stringify(entry));
    await pool.query("INSERT INTO pi_flow.child_sessions (workflow_id, seq, worker, entry) VALUES ($1, 0, repeat('w', 10000000), $2), ($1, 1, repeat('w', 10000000), $3)", [named, first, second]);
    const saved = await loadSavedSession(pool, named);
    expect(saved?.entries).toHaveLength(2);
    expect(saved?.worker).toBe("w".repeat(128));
    // Rows that measure nothing still cost a read: more of them, with empty entries and names, than a read takes (lowered to 1,000 here).
    const many = "wf_forged_rows/agent/0";
    await pool.query("INSERT INTO pi_flow.child_sessions (workflow_id, seq, worker, entry) SELECT $1, i, '', '' FROM generate_series(0, 1000) AS i", [many]);
    await expect(loadSavedSession(pool, many, undefined, 1000)).rejects.toMatchObject({
      code: "failed",
      message: `The saved Pi session of ${many} is 1001 rows in the database, over the 1000 rows pi-flow reads: not read. Its rows stay in pi_flow.child_sessions, as they were written, for whoever looks into them.`,
    });
  } finally {
    await pool.end();
  }
});

test("a sweep whose resume of a silent worker's children fails leaves that worker claimable, and the next sweep puts its children back", async () => {
  const url = fleet.pg.urlFor("fleet_claim");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 2);
  try {
    // A worker silent for a minute, and the child it was running.
    await pool.query("INSERT INTO pi_flow.workers (name, version, concurrency, instance, seen_at) VALUES ('gone', 'v', 1, 'i', now() - interval '1 minute')");
    await pool.query("INSERT INTO dbos.workflow_status (workflow_uuid, status, queue_name, executor_id) VALUES ('wf_orphan/agent/0', 'PENDING', $1, 'gone')", [CHILD_QUEUE]);
    // The database goes away as the sweeper resumes it.
    await expect(claimSilentWorkersChildren(pool, async () => Promise.reject(new Error("the database went away")))).rejects.toThrow("the database went away");
    expect((await pool.query("SELECT name FROM pi_flow.workers")).rows).toEqual([{ name: "gone" }]);
    const resumed: string[][] = [];
    expect(await claimSilentWorkersChildren(pool, async (ids) => (resumed.push(ids), ids))).toEqual(["wf_orphan/agent/0"]);
    expect(resumed).toEqual([["wf_orphan/agent/0"]]);
    expect((await pool.query("SELECT name FROM pi_flow.workers")).rows).toEqual([]);
  } finally {
    await pool.end();
  }
});

test("a child its coordinator cancels as a sweep puts a silent worker's children back stays cancelled: no worker runs it again", async () => {
  const url = fleet.pg.urlFor("fleet_cancel_race");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 2);
  const coordinator = new pg.Client({ connectionString: url });
  await coordinator.connect();
  try {
    await pool.query("INSERT INTO pi_flow.workers (name, version, concurrency, instance, seen_at) VALUES ('dead', 'v', 1, 'i', now() - interval '1 minute')");
    await pool.query("INSERT INTO dbos.workflow_status (workflow_uuid, status, queue_name, executor_id) VALUES ('wf_kept/agent/0', 'PENDING', $1, 'dead'), ('wf_dropped/agent/0', 'PENDING', $1, 'dead')", [CHILD_QUEUE]);
    // DBOS's cancel of a child is one update of its row: the coordinator's is under way as the sweep reads the rows.
    await coordinator.query("BEGIN");
    await coordinator.query("UPDATE dbos.workflow_status SET status = 'CANCELLED' WHERE workflow_uuid = 'wf_dropped/agent/0'");
    const sweep = claimSilentWorkersChildren(pool);
    const waiting = async () => (await coordinator.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = 'fleet_cancel_race'")).rows[0]!.n;
    while ((await waiting()) === 0) await sleep(20); // the sweep's requeue waits on the cancelled row
    await coordinator.query("COMMIT");
    expect(await sweep).toEqual(["wf_kept/agent/0"]);
    const { rows } = await pool.query("SELECT workflow_uuid, status FROM dbos.workflow_status ORDER BY workflow_uuid");
    expect(rows).toEqual([
      { workflow_uuid: "wf_dropped/agent/0", status: "CANCELLED" },
      { workflow_uuid: "wf_kept/agent/0", status: "ENQUEUED" },
    ]);
  } finally {
    await coordinator.end();
    await pool.end();
  }
});

test("a worker that starts a child afresh over rows it did not write (forged, or an earlier session's) checkpoints its own session over them; a worker whose child another runs now writes and deletes nothing", async () => {
  const url = fleet.pg.urlFor("fleet_sweep");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 1);
  try {
    const id = "wf_stale_rows/agent/0";
    await pool.query("INSERT INTO dbos.workflow_status (workflow_uuid, status, executor_id) VALUES ($1, 'PENDING', 'w2')", [id]);
    // Rows nobody can continue from (the first is not JSON), and one further on: the read finds nothing whole.
    await pool.query("INSERT INTO pi_flow.child_sessions (workflow_id, seq, worker, entry) VALUES ($1, 0, 'w1', '{'), ($1, 1, 'w1', $2), ($1, 2, 'w1', $2)", [id, JSON.stringify(entries("old")[1])]);
    expect(await loadSavedSession(pool, id)).toBeNull();
    const told: string[] = [];
    const checkpoints = sessionCheckpoints({ pool, workflowId: id, worker: "w2", saved: null, unread: () => [], onDiagnostic: (message) => told.push(message) });
    checkpoints.save(entries("new"));
    await checkpoints.drain();
    expect(checkpoints.stored()).toEqual({ entries: 2 });
    // What a takeover (or the coordinator's copy) reads is this worker's session, whole, and nothing after it.
    const saved = await loadSavedSession(pool, id);
    expect(saved?.entries).toEqual(entries("new"));
    expect(saved?.worker).toBe("w2");
    expect((await pool.query("SELECT count(*)::int AS n FROM pi_flow.child_sessions WHERE workflow_id = $1", [id])).rows).toEqual([{ n: 2 }]);

    // w1, taken for dead but alive, checkpoints again: refused, said once, and w2's session stands.
    const late: string[] = [];
    const stale = sessionCheckpoints({ pool, workflowId: id, worker: "w1", saved: null, unread: () => ["late steer"], onDiagnostic: (message) => late.push(message) });
    stale.save(entries("old"));
    await stale.drain();
    expect(late).toEqual(["A checkpoint of the child's Pi session could not be written (another worker runs the child now); it is tried again after the next turn."]);
    expect(stale.stored()).toEqual({ unsaved: "its last checkpoint could not be written (another worker runs the child now)" });
    expect(await loadSavedSession(pool, id)).toEqual({ entries: entries("new"), worker: "w2", steers: [] });
    // Its child then ends there with nothing whole saved: what it deletes is its own, and w2's session stays.
    await deleteSavedSession(pool, id, "w1");
    expect((await loadSavedSession(pool, id))?.entries).toEqual(entries("new"));
  } finally {
    await pool.end();
  }
});

test("a steer a turn read before that turn was saved stays among the saved unread steers when another is handed over: a worker killed then loses neither", async () => {
  const url = fleet.pg.urlFor("fleet_sweep");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 1);
  try {
    const id = "wf_read_unsaved/agent/0";
    let unread: string[] = [];
    const checkpoints = sessionCheckpoints({ pool, workflowId: id, worker: "w1", saved: null, unread: () => unread, onDiagnostic: () => undefined });
    checkpoints.save(entries("turn one").slice(0, 1));
    unread = ["first"];
    checkpoints.handed("first", "1");
    unread = []; // the next turn's model request took it; that turn has not ended
    unread = ["second"];
    checkpoints.handed("second", "2");
    await checkpoints.drain();
    // A takeover continues from the saved turn, which never read "first": both are handed over again.
    expect((await loadSavedSession(pool, id))?.steers).toEqual(["first", "second"]);
    // The turn that read "first" is saved: only "second" still waits.
    checkpoints.save(entries("turn one"));
    await checkpoints.drain();
    expect(await loadSavedSession(pool, id)).toMatchObject({ entries: entries("turn one"), steers: ["second"] });
  } finally {
    await pool.end();
  }
});

test("a session the coordinator could not write into the child's run (killed, or its disk refused) stays in the database until a later copy of it (the run's resume) writes it", async () => {
  const url = fleet.pg.urlFor("fleet_sweep");
  const coordinator = dbosCoordinator(url);
  await coordinator.ready(); // the database and its tables, as a launch makes them
  const pool = testPool(url, 1);
  const runs = mkdtempSync(join(tmpdir(), "pi-flow-kept-"));
  try {
    const id = "wf_unwritten/agent/0";
    await appendSessionEntries(pool, id, "w9", 0, entries("done").map((entry) => JSON.stringify(entry)), []);
    const notKept: string[] = [];
    const place = { workflowId: id, worker: "w9", cwd: runs, notKept: (message: string) => notKept.push(message) };
    // The run's folder is a file: the write fails where a kill would stop it.
    writeFileSync(join(runs, "blocked"), "");
    await keepWorkerSession(coordinator, { ...place, file: join(runs, "blocked", "session.jsonl") }, { entries: 2 });
    expect(notKept).toEqual(["its Pi session was not kept from worker w9 (it could not be written into the run)"]);
    expect((await pool.query("SELECT count(*)::int AS n FROM pi_flow.child_sessions WHERE workflow_id = $1", [id])).rows).toEqual([{ n: 2 }]);
    // The resume's copy writes it, and then its rows go.
    const file = join(runs, "session.jsonl");
    await keepWorkerSession(coordinator, { ...place, file }, { entries: 2 });
    expect(notKept).toHaveLength(1);
    expect(readFileSync(file, "utf8")).toContain('"text":"done"');
    expect(await loadSavedSession(pool, id)).toBeNull();
  } finally {
    await pool.end();
    await coordinator.close();
    rmSync(runs, { recursive: true, force: true });
  }
});

test("a worker's sweep deletes the requests (prompts) of settled children whose coordinator never read them, not those of children queued or running, nor another application's", async () => {
  const url = fleet.pg.urlFor("fleet_sweep");
  await migrate(await loadDbos(), url);
  const pool = testPool(url, 1);
  try {
    const rows: [string, string, string][] = [
      ["wf_in_done/agent/0", "SUCCESS", CHILD_WORKFLOW],
      ["wf_in_cancelled/agent/0", "CANCELLED", CHILD_WORKFLOW],
      ["wf_in_queued/agent/0", "ENQUEUED", CHILD_WORKFLOW],
      ["wf_in_running/agent/0", "PENDING", CHILD_WORKFLOW],
      ["someone-elses", "SUCCESS", "another"],
    ];
    for (const [id, status, name] of rows) {
      await pool.query("INSERT INTO dbos.workflow_status (workflow_uuid, status, name) VALUES ($1, $2, $3)", [id, status, name]);
      await pool.query("INSERT INTO dbos.workflow_input (workflow_uuid, inputs) VALUES ($1, 'the prompt')", [id]);
    }
    await deleteSettledInputs(pool);
    const kept = await pool.query<{ workflow_uuid: string }>("SELECT workflow_uuid FROM dbos.workflow_input WHERE workflow_uuid = ANY($1) ORDER BY workflow_uuid", [rows.map(([id]) => id)]);
    expect(kept.rows.map((row) => row.workflow_uuid)).toEqual(["someone-elses", "wf_in_queued/agent/0", "wf_in_running/agent/0"]);
  } finally {
    await pool.end();
  }
}, 120_000);
