// A worker child's settle waits for its session to be copied from the database: a database that
// never answers must cost the child its resumable session, said in its diagnostics, not its settle.
import { mkdtempSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { keepWorkerSession } from "../../src/backends/kept-session.ts";
import type { FleetChildren } from "../../src/backends/fleet.ts";

const dir = mkdtempSync(join(tmpdir(), "pi-flow-kept-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a database that does not answer: the settle goes on, and the run says its session was not kept and why", async () => {
  // The database behind the fleet is gone without a reset: the query never returns.
  const silent = { takeSession: () => new Promise<never>(() => undefined) } as unknown as FleetChildren;
  const said: string[] = [];
  const file = join(dir, "session.jsonl");
  await keepWorkerSession(silent, { workflowId: "wf_x/agent/0", worker: "w1", file, cwd: dir, notKept: (why) => said.push(why), takeMs: 50 }, { entries: 3 });
  expect(said).toEqual(["its Pi session was not kept from worker w1 (the database did not answer within 0.05 s)"]);
  expect(existsSync(file)).toBe(false);
});
