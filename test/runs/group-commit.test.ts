import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { groupCommit } from "../../src/runs/fsio.ts";
import { sandbox, type Sandbox } from "./helpers.ts";

let box: Sandbox;
beforeEach(() => (box = sandbox()));
afterEach(() => box.cleanup());

describe("group commit", () => {
  it("runs that settle together are made durable in one batch, off the call that settled them", async () => {
    const store = box.store();
    const commit = groupCommit();
    await commit.idle();
    const before = { ...commit.stats };
    const views = Array.from({ length: 50 }, (_, i) => {
      const run = store.create({ kind: "agent", task: { description: `r${i}` }, background: false });
      run.appendOutput(`answer ${i}`);
      return run.settle({ outcome: "succeeded", value: `answer ${i}` }).view;
    });
    // Settling returned at once, with the result readable, before anything was fsynced.
    expect(views.every((view) => view.state.outcome === "succeeded")).toBe(true);
    expect(commit.stats.batches).toBe(before.batches);
    await commit.idle();
    expect(commit.stats.batches).toBe(before.batches + 1);
    // Each path once per phase of the batch: per run the final value and its directory, then the
    // journal and output, then the record and the directory again (its rename).
    expect(commit.stats.fsyncs - before.fsyncs).toBe(50 * 6);
  });

  it("runs that settle in later turns form later batches, and idle() waits for each", async () => {
    const store = box.store();
    const commit = groupCommit();
    await commit.idle();
    const before = commit.stats.batches;
    const run = store.create({ kind: "workflow", task: { description: "w" }, background: true });
    run.settle({ outcome: "succeeded", value: { ok: 1 } });
    const second = store.create({ kind: "agent", task: { description: "later" }, background: false });
    await commit.idle();
    second.settle({ outcome: "failed", error: { code: "failed", message: "no" } });
    await commit.idle();
    expect(commit.stats.batches).toBe(before + 2);
    expect(store.view(run.runId).state.outcome).toBe("succeeded");
  });
});
