/**
 * Postgres restarting mid-run: the server is killed while a child runs on a worker and started
 * again on the same data. The run in flight goes on when the database is back: the child's answer
 * reaches the script once, the next child is enqueued and run, and no child starts twice. Real
 * processes throughout: Postgres, a `flow worker` and a `flow run`, pi children answered by Pi's
 * faux provider (the held child answers once the test releases it).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { FAUX_EXTENSION } from "../cli/support.ts";
import { fleetFixture } from "../support/fleet.ts";

const fleet = fleetFixture();
const { sandbox, project } = fleet;
const release = join(sandbox.root, "release");
sandbox.fauxRules([
  { match: "Do the held part", answer: "held part done", waitFor: release },
  { match: "Do the next part", answer: "next part done" },
]);
const script = sandbox.file(
  "outage.js",
  [
    "export const apiVersion = 1;",
    'export const meta = { name: "outage" };',
    'const held = await agent({ role: "worker", description: "Held part", prompt: "Do the held part.", context: { mode: "none" } });',
    'const next = await agent({ role: "worker", description: "Next part", prompt: "Do the next part.", context: { mode: "none" } });',
    "return [held.value, next.value];",
  ].join("\n"),
);
const MODEL = ["--model", "faux/faux-1", "--extension", FAUX_EXTENSION];

test("Postgres killed while a child runs, the child released while it is down, then started again: the run goes on when the database is back, and no child starts twice", async () => {
  const databaseUrl = fleet.pg.urlFor("fleet_outage");
  const worker = fleet.startWorker("o1", databaseUrl, ["--concurrency", "1", ...MODEL]);
  await worker.stdoutText(/worker o1 ready/);
  const coordinator = fleet.start(["run", script, "--cwd", project, ...MODEL], { PI_FLOW_DATABASE_URL: databaseUrl, PI_FLOW_BACKEND: "dbos" });
  await worker.stdoutText(/started \S+\/agent\/0 run ag_/);

  // Every connection of the worker and the coordinator is cut; the child is released while the
  // server is down. Its settled line comes once DBOS has recorded its answer, so after the restart.
  await fleet.pg.restart(async () => {
    writeFileSync(release, "");
  });
  await worker.stdoutText(/settled \S+\/agent\/0 run ag_\S+ succeeded/);

  const result = await coordinator.done;
  expect(result.stderr).toMatch(/2 children, 0 failed/);
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toEqual(["held part done", "next part done"]);
  worker.child.kill("SIGTERM");
  const { stdout, code } = await worker.done;
  expect(code).toBe(0);
  expect(stdout.match(/^started /gm)).toHaveLength(2);
  expect(stdout.match(/^settled \S+ run ag_\S+ succeeded$/gm)).toHaveLength(2);
});
