/**
 * A pi child taken over by another worker continues the Pi session its first worker saved in the
 * database: real processes throughout (Postgres, two `flow worker`s, a `flow run`), the child on the
 * pi harness answered by Pi's faux provider. The first worker is killed with SIGKILL after the
 * child's first turn (a tool call and its result) is saved, while its second model request waits.
 * In `npm run test:fleet`; the checkpoints themselves are pinned in `npm test`
 * (test/backends/takeover.test.ts, takeover-session.test.ts).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { expect, test } from "vitest";
import { FAUX_EXTENSION, flow, runFileText } from "../cli/support.ts";
import { fleetFixture, oneChildScript } from "../support/fleet.ts";

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
const script = oneChildScript(sandbox, "two-turns", "two-turn");
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
  await second.stdoutText(new RegExp(`took over 1 unfinished child of a silent worker: ${workflowId}`));
  const settled = await second.stdoutText(/settled \S+ run ag_\S+ succeeded/);
  const runId = /run (ag_\S+) succeeded/.exec(settled)![1]!;
  expect(settled).toContain(`continued ${workflowId} run ${runId}: continued on worker w2 from turn 2 (taken over from w1)\n`);

  const result = await coordinator.done;
  expect(result.code).toBe(0);
  // The model's turn 2 on w2 read turn 1's tool result, which only w1 ever produced, and the steer w1 took.
  expect(JSON.parse(result.stdout)).toBe("done after: output of turn one; last heard: Also say what you heard last.");
  expect(readFileSync(ranLog, "utf8")).toBe("ran\n");
  expect(result.stderr).toMatch(/1 child, 0 failed agent\(\) calls/);

  const shown = await flow(["runs", "show", runId, "--view", "diagnostics", "--cwd", project], { env: sandbox.env });
  expect(shown.stdout).toContain("continued on worker w2 from turn 2 (taken over from w1)");
  expect(shown.stdout).toContain("ran on worker w2");
  // Usage counts the saved turn once and the turn w2 ran: two turns, one tool call.
  const record = JSON.parse(runFileText(sandbox, runId, "record.json")) as { usage?: { turns: number; toolCalls: number } };
  expect(record.usage).toMatchObject({ turns: 2, toolCalls: 1 });
  // The session both workers wrote is kept whole in the child's run, as a local child's: a resume continues it.
  const session = runFileText(sandbox, runId, "session.jsonl");
  expect(JSON.parse(session.slice(0, session.indexOf("\n")))).toMatchObject({ type: "session" });
  expect(session).toContain("Also say what you heard last.");
  expect(session).toContain("done after: output of turn one");
  // Nothing of the child's session outlives it in the database.
  expect(await query(url, "SELECT 1 FROM pi_flow.child_sessions")).toEqual([]);
  second.child.kill("SIGTERM");
  expect((await second.done).code).toBe(0);
}, 300_000);

