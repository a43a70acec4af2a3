/**
 * 200 children over two workers: both take work, every agent() call runs once, and the value is
 * the local backend's. The same as test/backends/fleet.test.ts at ten times the size.
 */
import { expect, test } from "vitest";
import { flow } from "../cli/support.ts";
import { fleetFixture } from "../support/fleet.ts";

const CHILDREN = 200;
const fleet = fleetFixture();
const { sandbox, project } = fleet;
const script = sandbox.file(
  "fanout.js",
  `export const apiVersion = 1;
export const meta = { name: "fanout", description: "Many small children", limits: { agentCalls: ${CHILDREN}, concurrency: 32 } };
const schema = { type: "object", properties: { n: { type: "integer", minimum: 0, maximum: 1000 } }, required: ["n"], additionalProperties: false };
const runs = await parallel(Array.from({ length: ${CHILDREN} }, (_, i) => () =>
  agent({ role: "explorer", description: "Part " + i, prompt: "Look at part " + i + ".", outputSchema: schema })), { concurrency: 32 });
return runs.map((run) => run.value.n);
`,
);

test(`${CHILDREN} children over two workers: both take work, each child runs once, the value is the local backend's`, async () => {
  const databaseUrl = fleet.pg.urlFor("fleet_fanout");
  const env = fleet.env({ PI_FLOW_DATABASE_URL: databaseUrl });
  const workers = ["f1", "f2"].map((name) => fleet.startWorker(name, databaseUrl, ["--stub", "--concurrency", "8"]));
  await Promise.all(workers.map((worker) => worker.stdoutText(/ready/)));
  const onFleet = await flow(["run", script, "--stub", "--cwd", project], { env: { ...env, PI_FLOW_BACKEND: "dbos" } });
  expect(onFleet.code).toBe(0);
  const local = await flow(["run", script, "--stub", "--cwd", project], { env: sandbox.env });
  expect(JSON.parse(onFleet.stdout)).toEqual(JSON.parse(local.stdout));
  for (const worker of workers) worker.child.kill("SIGTERM");
  const outputs = (await Promise.all(workers.map((worker) => worker.done))).map((result) => result.stdout);
  const settled = outputs.map((stdout) => stdout.split("\n").filter((line) => line.startsWith("settled ")));
  expect(settled.every((lines) => lines.length > 0)).toBe(true);
  const ids = settled.flat().map((line) => line.split(" ")[1]);
  expect(ids).toHaveLength(CHILDREN);
  expect(new Set(ids).size).toBe(CHILDREN);
});
