import { readFileSync, writeFileSync } from "node:fs";
import { expect, test } from "vitest";
import { runFiles } from "../../src/runs/home.ts";
import { sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
sandboxPerTest((fresh) => (box = fresh));

test("a record forged with a megabyte description shows 200 characters of it, in every view and its text", async () => {
  const store = box.store();
  const run = store.create({ kind: "agent", task: { description: "short" }, background: false });
  run.settle({ outcome: "succeeded", value: "done" });
  await store.idle();
  const files = runFiles(store.scope, run.runId);
  const forged = (text: string) => text.replaceAll(`"description":"short"`, `"description":"${"x".repeat(1_000_000)}","role":"${"r".repeat(5_000)}"`);
  writeFileSync(files.record, forged(readFileSync(files.record, "utf8")));
  writeFileSync(files.journal, forged(readFileSync(files.journal, "utf8")));
  const seen = box.otherProcess();
  for (const view of [seen.view(run.runId), seen.list().runs[0]!]) {
    expect(view.task.description).toBe(`${"x".repeat(199)}…`);
    expect(view.task.role).toBe(`${"r".repeat(199)}…`);
  }
  expect(seen.text(run.runId).length).toBeLessThan(2_000);
});
