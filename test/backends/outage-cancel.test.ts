/**
 * A cancel sent while the fleet's Postgres is down: the coordinator keeps it and sends it again
 * once the database is back, so no worker ever runs the cancelled child. A real Pi session
 * coordinates, the tests' own Postgres is killed and started again, and a real `flow worker`
 * starts after.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { PROJECT_ROOT } from "../cli/support.ts";
import { fleetFixture } from "../support/fleet.ts";
import { startPiSession, type PiTestSession, type ToolOutcome } from "../support/pi-session.ts";

const fleet = fleetFixture();
const DATABASE = "outage_cancel";

const delegation = (description: string, extra: Record<string, unknown> = {}) => ({ role: "explorer", description, prompt: "Look.", context: { mode: "none" }, background: true, ...extra });
/**
 * How long Postgres stays away: the scenario, not a wait for anything. Long enough for the child's
 * time limit to pass while it is away, and for DBOS's own retry of the first cancel to back off
 * past a worker's start once it is back.
 */
const OUTAGE_MS = 20_000;
const runOf = (outcome: ToolOutcome): RunView => (outcome.structuredContent as { data: { run: RunView } }).data.run;
const listed = async (pi: PiTestSession, runId: string): Promise<RunView | undefined> =>
  ((await pi.callTool("external_runs", { action: "list" })).structuredContent as { data: { runs: RunView[] } }).data.runs.find((run) => run.runId === runId);

/** The child's DBOS workflow status, as the database holds it; undefined before it is enqueued. */
async function workflowStatus(workflowId: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: fleet.pg.urlFor(DATABASE) });
  client.on("error", () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ status: string }>("SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1", [workflowId]);
    return rows[0]?.status;
  } finally {
    await client.end();
  }
}

test("queued children cancelled, or out of time, while Postgres is down are cancelled in the database once it is back, and a worker that starts at once never runs them", async () => {
  const pi = await startPiSession({ env: { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: fleet.pg.urlFor(DATABASE) } });
  onTestFinished(() => pi.dispose());

  // No worker yet: the children wait on the queue.
  const timed = runOf(await pi.callTool("external_delegate", delegation("Timed part", { timeoutMs: 5000 }))).runId;
  const cancelled = runOf(await pi.callTool("external_delegate", delegation("Cancelled part"))).runId;
  for (const runId of [timed, cancelled]) while ((await workflowStatus(`${runId}/delegate`)) !== "ENQUEUED") await sleep(50);

  await fleet.pg.restart(async () => {
    const receipt = await pi.callTool("external_runs", { action: "cancel", runIds: [cancelled] });
    expect(receipt.isError).toBe(false);
    expect(receipt.text).toContain("requested");
    await sleep(OUTAGE_MS);
  });

  // Back up: a worker starts at once, and takes the child queued after them, never them.
  const worker = fleet.startWorker("after", fleet.pg.urlFor(DATABASE), ["--stub", "--concurrency", "1"]);
  await worker.stdoutText(/worker after ready/);
  const later = runOf(await pi.callTool("external_delegate", delegation("Later part"))).runId;
  await worker.stdoutText(new RegExp(`settled ${later}/delegate run ${later} succeeded`));
  await pi.callTool("external_runs", { action: "wait", runIds: [timed, cancelled] });
  worker.child.kill("SIGTERM");
  const { stdout } = await worker.done;
  expect(stdout).not.toContain(cancelled);
  expect(stdout).not.toContain(timed);
  expect((await listed(pi, cancelled))?.state).toMatchObject({ status: "done", outcome: "cancelled" });
  expect((await listed(pi, timed))?.state).toMatchObject({ status: "done", outcome: "timed_out" });
  expect(await workflowStatus(`${cancelled}/delegate`)).toBe("CANCELLED");
  expect(await workflowStatus(`${timed}/delegate`)).toBe("CANCELLED");
}, 180_000);

test("a steer to a fleet child while Postgres is down answers refused, quoting the database, instead of queued: nothing was delivered", async () => {
  const url = fleet.pg.urlFor("outage_steer");
  const pi = await startPiSession({ env: { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: url } });
  onTestFinished(() => pi.dispose());
  const release = join(fleet.sandbox.root, "outage-steer-release");
  const model = ["--model", "faux/faux-1", "--extension", join(PROJECT_ROOT, "test", "fixtures", "fleet", "steer-model.ts")];
  const worker = fleet.start(["worker", "--name", "o1", "--cwd", pi.cwd, ...model], { PI_FLOW_DATABASE_URL: url, FLOW_STEER_RELEASE: release });
  await worker.stdoutText(/worker o1 ready/);
  const { runId } = runOf(await pi.callTool("external_delegate", { role: "worker", description: "Waiting part", prompt: "Do the part.", context: { mode: "none" }, background: true }));
  await worker.stdoutText(new RegExp(`started ${runId}/delegate run ${runId}`));
  while ((await listed(pi, runId))?.state.status !== "running") await sleep(50);

  let steered: ToolOutcome | undefined;
  await fleet.pg.restart(async () => {
    steered = await pi.callTool("external_runs", { action: "steer", runIds: [runId], message: "Also check the README." });
  });
  expect(steered?.structuredContent).toMatchObject({ ok: true, data: { runId, status: "refused", reason: expect.stringContaining("The database did not take the steer") } });
  expect(steered?.text).toContain("Steer refused, not delivered");

  writeFileSync(release, "");
  await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
  const final = await pi.callTool("external_runs", { action: "inspect", runIds: [runId], view: "final" });
  expect(final.text).toContain("heard nothing");
  const diagnostics = (await pi.callTool("external_runs", { action: "inspect", runIds: [runId], view: "diagnostics" })).text;
  expect(diagnostics).toContain("steer_refused");
  expect(diagnostics).not.toContain("steer_undelivered");
  worker.child.kill("SIGTERM");
  await worker.done;
}, 180_000);
