import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { expect, test } from "vitest";
import { runFiles } from "../../src/runs/home.ts";
import { sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
sandboxPerTest((fresh) => (box = fresh));

test("a run's correlation ID is kept in its record and journal: its own ID when fresh, the one it was given when it continues a line of work", async () => {
  const store = box.store();
  const fresh = store.create({ kind: "agent", task: { description: "fresh" }, background: false });
  const resumed = store.create({ kind: "agent", task: { description: "resumed", correlationId: fresh.runId }, background: false });
  const child = store.create({ kind: "agent", task: { description: "child", parentRunId: resumed.runId }, background: false });
  for (const run of [fresh, resumed, child]) run.settle({ outcome: "succeeded", value: run.runId });
  await store.idle();

  const seen = box.otherProcess(); // nothing in memory: what the files say
  expect([fresh, resumed, child].map((run) => seen.view(run.runId).correlationId)).toEqual([fresh.runId, fresh.runId, fresh.runId]);
  const record = JSON.parse(readFileSync(runFiles(store.scope, resumed.runId).record, "utf8")) as { task: Record<string, unknown> };
  expect(record.task.correlationId).toBe(fresh.runId);
  expect(seen.view(resumed.runId).task).not.toHaveProperty("correlationId"); // shown once, beside the run ID
});

test("a run recorded before correlation IDs existed reads as its own line of work", async () => {
  const store = box.store();
  const run = store.create({ kind: "agent", task: { description: "old" }, background: false });
  run.settle({ outcome: "succeeded", value: "old" });
  await store.idle();
  const files = runFiles(store.scope, run.runId);
  // What an earlier pi-flow wrote: no correlationId in the record or the journal's start line.
  const strip = (text: string) => text.replaceAll(`,"correlationId":"${run.runId}"`, "");
  writeFileSync(files.journal, strip(readFileSync(files.journal, "utf8")));
  writeFileSync(files.record, strip(readFileSync(files.record, "utf8")));
  expect(readFileSync(files.journal, "utf8")).not.toContain("correlationId");
  expect(box.otherProcess().view(run.runId)).toMatchObject({ runId: run.runId, correlationId: run.runId, state: { outcome: "succeeded" } });
  rmSync(files.record); // and with the record gone, from the journal alone
  expect(box.otherProcess().view(run.runId).correlationId).toBe(run.runId);
});
