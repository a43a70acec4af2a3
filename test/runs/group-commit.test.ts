import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runFiles } from "../../src/runs/home.ts";
import { GroupCommit, groupCommit } from "../../src/runs/write/group-commit.ts";
import { RunRegistry } from "../../src/runs/index.ts";
import { sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
sandboxPerTest((fresh) => (box = fresh));

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
    // Each path once per phase of the batch: per run the journal (which carries the small final
    // value), the output and the folder that names them. The records, a cache, are rewritten but
    // never fsynced.
    expect(commit.stats.fsyncs - before.fsyncs).toBe(50 * 3);
    expect(commit.stats.rewrites - before.rewrites).toBe(50);
    expect(existsSync(runFiles(store.scope, views[0]!.runId).final)).toBe(false);
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

  it("a record changed many times in a turn is rewritten once, off the call, with its latest state", async () => {
    const store = box.store();
    const commit = groupCommit();
    await commit.idle();
    const before = { ...commit.stats };
    const run = store.create({ kind: "workflow", task: { description: "fan-out" }, background: true });
    for (let i = 1; i <= 100; i++) {
      run.setChildren({ count: i, failed: 0 });
      run.setUsage({ turns: i });
    }
    // Nothing written yet: a reader in another process rebuilds the run from its journal.
    const other = box.otherProcess();
    expect(other.view(run.runId)).toMatchObject({ task: { description: "fan-out" }, state: { status: "interrupted_or_uncertain" } });
    await store.idle();
    expect(commit.stats.rewrites - before.rewrites).toBe(1);
    const record = JSON.parse(readFileSync(runFiles(store.scope, run.runId).record, "utf8")) as Record<string, unknown>;
    expect(record).toMatchObject({ status: "running", children: { count: 100, failed: 0 }, usage: { turns: 100 } });
    run.settle({ outcome: "succeeded", value: 1 });
    await store.idle();
    expect(commit.stats.rewrites - before.rewrites).toBe(2);
    expect(other.view(run.runId)).toMatchObject({ state: { status: "done", outcome: "succeeded" }, children: { count: 100 } });
  });

  it("work queued while a batch is being written waits for it and goes in one next batch: a file rewritten twice meanwhile is written once", async () => {
    const commit = new GroupCommit();
    const record = join(box.root, "record.json");
    const other = join(box.root, "other.json");
    commit.rewrite(record, {
      render: () => {
        commit.rewrite(other, { render: () => "first\n" }); // while the batch writes
        return "record\n";
      },
      beforeRename: () => commit.rewrite(other, { render: () => "second\n" }), // turns later, same batch
    });
    await commit.idle();
    expect(commit.stats).toMatchObject({ batches: 2, rewrites: 2 });
    expect(readFileSync(other, "utf8")).toBe("second\n");
  });
});
