import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runFiles } from "../../src/runs/home.ts";
import { sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
sandboxPerTest((fresh) => (box = fresh));

describe("logs a run never wrote", () => {
  it("a run with no output leaves no output log, and its output and diagnostics views read empty, here and in another process", async () => {
    const store = box.store();
    const run = store.create({ kind: "agent", task: { description: "quiet child" }, background: false });
    run.settle({ outcome: "succeeded", value: "done" });
    await store.idle();
    const files = runFiles(store.scope, run.runId);
    expect(existsSync(files.output)).toBe(false);
    expect(existsSync(files.diagnostics)).toBe(false);
    for (const reader of [store, box.otherProcess()]) {
      for (const view of ["output", "diagnostics"] as const) {
        const page = reader.inspectSingle(run.runId, view);
        expect(page).toMatchObject({ outputStatus: "empty", page: { text: "", complete: true } });
      }
    }
  });

  it("a workflow's log it never wrote is the empty JSON array: its json pages always parse", async () => {
    const store = box.store();
    const run = store.create({ kind: "workflow", task: { description: "quiet workflow" }, background: false });
    run.settle({ outcome: "succeeded", value: null });
    await store.idle();
    expect(existsSync(runFiles(store.scope, run.runId).output)).toBe(false);
    for (const reader of [store, box.otherProcess()]) {
      const page = reader.inspectSingle(run.runId, "output");
      expect(page).toMatchObject({ outputStatus: "empty", page: { encoding: "json", complete: true } });
      expect(JSON.parse(page.page.text)).toEqual([]);
    }
  });

  it("a log its owner wrote and that is gone since still reads unavailable", async () => {
    const store = box.store();
    const run = store.create({ kind: "agent", task: { description: "child" }, background: false });
    run.appendOutput("an answer");
    run.settle({ outcome: "succeeded", value: "an answer" });
    await store.idle();
    const { rmSync } = await import("node:fs");
    rmSync(runFiles(store.scope, run.runId).output);
    for (const reader of [store, box.otherProcess()]) {
      expect(reader.inspectSingle(run.runId, "output")).toMatchObject({ outputStatus: "unavailable", page: { text: "" } });
    }
  });

  it("a run interrupted before it wrote output reads unavailable: its owner's last counts may be stale", async () => {
    const crashed = box.otherProcess().create({ kind: "agent", task: { description: "crashed" }, background: true });
    await box.store().idle();
    expect(box.store().inspectSingle(crashed.runId, "output")).toMatchObject({ outputStatus: "unavailable", page: { text: "" } });
  });
});
