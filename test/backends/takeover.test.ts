/**
 * A pi child taken over by another worker continues the Pi session its first worker saved in the
 * database: real processes throughout (Postgres, two `flow worker`s, a `flow run`), the child on the
 * pi harness answered by Pi's faux provider. The first worker is killed with SIGKILL after the
 * child's first turn (a tool call and its result) is saved, while its second model request waits.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { expect, test } from "vitest";
import { FAUX_EXTENSION, flow, runFileText } from "../cli/support.ts";
import { fleetFixture } from "../support/fleet.ts";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { deleteSettledSessions, loadSavedSession } from "../../src/backends/child-sessions.ts";
import { loadDbos, migrate } from "../../src/backends/dbos-load.ts";
import { sessionCheckpoints } from "../../src/backends/session-checkpoint.ts";

const fleet = fleetFixture();
const { sandbox, project } = fleet;
/** One line per run of turn 1's command, wherever it runs. */
const ranLog = join(sandbox.root, "turn-one-ran");
/** Turn 1's command ends once the test has steered the child. */
const steered = join(sandbox.root, "steered");
/** The model's answer after the tool's result waits for this file: the child is held in turn 2. */
const release = join(sandbox.root, "release-turn-two");
sandbox.fauxRules([
  {
    match: "Do the two-turn part",
    tool: { name: "bash", arguments: { command: `echo ran >> ${ranLog}; while [ ! -e ${steered} ]; do sleep 0.1; done; echo output of turn one` } },
    then: "done after: {toolResult}; last heard: {lastUser}",
    thenWaitFor: release,
    once: true,
  },
]);
const script = sandbox.file(
  "two-turns.js",
  [
    "export const apiVersion = 1;",
    'export const meta = { name: "two-turns" };',
    'const run = await agent({ role: "worker", description: "Two-turn part", prompt: "Do the two-turn part.", context: { mode: "none" } });',
    "return run.value;",
  ].join("\n"),
);
const MODEL = ["--model", "faux/faux-1", "--extension", FAUX_EXTENSION];

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

test("a worker killed after the child's first turn and a steer were saved: another worker continues its Pi session from turn 2 with the steer, turn 1's tool call is not made again, and the script gets the answer once", async () => {
  const url = fleet.pg.urlFor("fleet_takeover");
  const first = fleet.startWorker("w1", url, ["--concurrency", "1", ...MODEL]);
  await first.stdoutText(/worker w1 ready/);
  const coordinator = fleet.start(["run", script, "--cwd", project, ...MODEL], { PI_FLOW_DATABASE_URL: url, PI_FLOW_BACKEND: "dbos" });
  const workflowId = /started (\S+\/agent\/0) run ag_/.exec(await first.stdoutText(/started \S+\/agent\/0 run ag_/))![1]!;
  // A steer reaches w1 while turn 1's command runs (the coordinator's external_runs steer writes it so).
  while (!existsSync(ranLog)) await sleep(50);
  await query(url, `INSERT INTO pi_flow.steers (workflow_id, message) VALUES ('${workflowId}', 'Also say what you heard last.')`);
  await first.stdoutText(new RegExp(`steered ${workflowId}`));
  writeFileSync(steered, "");
  // Turn 1 ends with its tool's result, turn 2's request takes the steer: w1 checkpoints both, then waits on the model.
  const savedSteer = `SELECT 1 FROM pi_flow.child_sessions WHERE workflow_id = '${workflowId}' AND entry LIKE '%Also say what you heard last.%'`;
  while ((await query(url, savedSteer)).length === 0) await sleep(50);
  first.child.kill("SIGKILL");
  await first.done;
  // The 20 s of heartbeat silence that marks a worker dead, passed at once.
  await query(url, "UPDATE pi_flow.workers SET seen_at = now() - interval '1 hour' WHERE name = 'w1'");

  writeFileSync(release, ""); // from now on, the model answers turn 2 at once

  const second = fleet.startWorker("w2", url, ["--concurrency", "1", ...MODEL]);
  await second.stdoutText(new RegExp(`took over 1 unfinished children of a silent worker: ${workflowId}`));
  const settled = await second.stdoutText(/settled \S+ run ag_\S+ succeeded/);
  const runId = /run (ag_\S+) succeeded/.exec(settled)![1]!;
  expect(settled).toContain(`continued ${workflowId} run ${runId}: continued on worker w2 from turn 2 (taken over from w1)\n`);

  const result = await coordinator.done;
  expect(result.code).toBe(0);
  // The model's turn 2 on w2 read turn 1's tool result, which only w1 ever produced, and the steer w1 took.
  expect(JSON.parse(result.stdout)).toBe("done after: output of turn one; last heard: Also say what you heard last.");
  expect(readFileSync(ranLog, "utf8")).toBe("ran\n");
  expect(result.stderr).toMatch(/1 children, 0 failed agent\(\) calls/);

  const shown = await flow(["runs", "show", runId, "--view", "diagnostics", "--cwd", project], { env: sandbox.env });
  expect(shown.stdout).toContain("continued on worker w2 from turn 2 (taken over from w1)");
  expect(shown.stdout).toContain("ran on worker w2");
  // Usage counts the saved turn once and the turn w2 ran: two turns, one tool call.
  const record = JSON.parse(runFileText(sandbox, runId, "record.json")) as { usage?: { turns: number; toolCalls: number } };
  expect(record.usage).toMatchObject({ turns: 2, toolCalls: 1 });
  // Nothing of the child's session outlives it in the database.
  expect(await query(url, "SELECT 1 FROM pi_flow.child_sessions")).toEqual([]);
  second.child.kill("SIGTERM");
  expect((await second.done).code).toBe(0);
}, 300_000);

/** A saved session's entries as the harness hands them over: a user message, then one with `text`. */
const entries = (text: string): SessionEntry[] => [
  { type: "message", id: "u0000001", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: [{ type: "text", text: "Do it." }], timestamp: 0 } },
  { type: "message", id: "u0000002", parentId: "u0000001", timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: [{ type: "text", text }], timestamp: 1 } },
];

test("checkpoints are redacted and bounded, and a database that refuses them costs the child one diagnostic, never a failure", async () => {
  const url = fleet.pg.urlFor("fleet_checkpoints");
  await migrate(await loadDbos(), url); // DBOS's schema and pi-flow's tables, as a worker makes them
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const told: string[] = [];
  try {
    let unread: string[] = ["A steer no turn read yet."];
    const place = { pool, workflowId: "wf_bounded/agent/0", worker: "w9", saved: null, unread: () => unread, onDiagnostic: (message: string) => told.push(message) };
    const checkpoints = sessionCheckpoints(place, 2000);
    const token = "ghp_" + "a1B2c3D4e5".repeat(4);
    checkpoints.save(entries(`the token is ${token}`).slice(0, 1));
    await checkpoints.drain();
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
    // Rows of a workflow that is not queued or running (here: none at all) go at the next sweep.
    await deleteSettledSessions(pool);
    expect(await loadSavedSession(pool, "wf_bounded/agent/0")).toBeNull();
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
  await away.end();
});
