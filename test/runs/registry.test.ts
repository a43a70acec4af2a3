import { mkdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openRunStore, processRegistry, RunRegistry, type RunStore } from "../../src/runs/index.ts";
import { runFiles } from "../../src/runs/home.ts";
import { codeOf, sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
let store: RunStore;
sandboxPerTest((fresh, freshStore) => ((box = fresh), (store = freshStore)));

const task = { description: "t" };

describe("live registry", () => {
  it("supplies liveness: live while registered and unsettled, never from evidence alone", () => {
    const run = store.create({ kind: "agent", task, background: true });
    expect(store.view(run.runId).live).toBe(true);
    const otherProcess = box.otherProcess();
    expect(otherProcess.view(run.runId).live).toBe(false);
    run.settle({ outcome: "succeeded", value: 1 });
    expect(store.view(run.runId).live).toBe(false);
  });

  it("gives every run one stable completion promise that resolves with the settled view", async () => {
    const run = store.create({ kind: "workflow", task, background: true });
    const p1 = store.settled(run.runId);
    const p2 = store.settled(run.runId);
    expect(p1).toBe(p2);
    const { view } = run.settle({ outcome: "timed_out", error: { code: "timed_out", message: "too slow" } });
    await expect(p1).resolves.toEqual(view);
    expect((await p2).state).toEqual({ status: "done", outcome: "timed_out", error: { code: "timed_out", message: "too slow" } });
    // A run ended in an earlier process resolves from its evidence.
    const later = box.otherProcess();
    await expect(later.settled(run.runId)).resolves.toMatchObject({ state: { outcome: "timed_out" } });
  });

  it("cancel calls the owner's hook once and reports requested, then terminal", () => {
    const run = store.create({ kind: "agent", task, background: true });
    const reasons: string[] = [];
    run.onCancel((reason) => reasons.push(reason));
    expect(store.cancel(run.runId)).toEqual({ runId: run.runId, status: "requested" });
    expect(store.cancel(run.runId)).toEqual({ runId: run.runId, status: "requested" });
    expect(reasons).toEqual(["cancel requested"]);
    expect(run.cancelRequested).toBe(true);
    expect(store.view(run.runId).live).toBe(true); // requested does not mean stopped
    run.settle({ outcome: "cancelled", error: { code: "cancelled", message: "stopped by operator" } });
    expect(store.cancel(run.runId)).toEqual({ runId: run.runId, status: "terminal" });
  });

  it("delivers a cancel that arrived before the owner set its hook", () => {
    const run = store.create({ kind: "agent", task, background: true, status: "queued" });
    store.cancel(run.runId);
    let called = false;
    run.onCancel(() => (called = true));
    expect(called).toBe(true);
  });

  it("reports cancel of an ended run from a later process as terminal, and of an interrupted one as run_not_live", () => {
    const ended = store.create({ kind: "agent", task, background: false });
    ended.settle({ outcome: "failed", error: { code: "failed", message: "x" } });
    const interrupted = store.create({ kind: "agent", task, background: false });
    const later = box.otherProcess();
    expect(later.cancel(ended.runId).status).toBe("terminal");
    expect(codeOf(() => later.cancel(interrupted.runId))).toBe("run_not_live");
  });

  it("keeps a bounded number of settled runs in memory and never evicts a live one", () => {
    const registry = new RunRegistry({ maxSettled: 2 });
    const small = openRunStore({ home: box.home, cwd: box.project, sessionId: "s", registry });
    const live = small.create({ kind: "agent", task, background: true });
    const ids = [1, 2, 3].map((i) => {
      const w = small.create({ kind: "agent", task, background: false });
      w.settle({ outcome: "succeeded", value: i });
      return w.runId;
    });
    expect(registry.get(ids[0] as string)).toBeUndefined();
    expect(registry.get(ids[2] as string)?.final?.value).toBe(3);
    expect(registry.isLive(live.runId)).toBe(true);
    expect(registry.release(live.runId)).toBe(false);
    expect(small.view(ids[0]).output.value).toBe(1); // evicted from memory, still on disk
  });

  it("never evicts a value held only in memory: its refs.final keeps resolving after any number of later runs", () => {
    const registry = new RunRegistry({ maxSettled: 2 });
    const small = openRunStore({ home: box.home, cwd: box.project, sessionId: "s", registry });
    const lost = small.create({ kind: "agent", task, background: false });
    mkdirSync(runFiles(small.scope, lost.runId).final); // the final file cannot be written: a directory is in the way
    const big = "z".repeat(40_000);
    lost.settle({ outcome: "succeeded", value: big });
    for (let i = 0; i < 5; i++) small.create({ kind: "agent", task, background: false }).settle({ outcome: "succeeded", value: i });
    expect(registry.get(lost.runId)?.final).toMatchObject({ saved: false });
    const page = small.inspectSingle(lost.runId, "final", { limitBytes: 64 * 1024 });
    expect(page.page.text).toBe(big);
  });

  it("has one process-wide registry", () => {
    expect(processRegistry()).toBe(processRegistry());
  });

  it("refuses writes after settle", () => {
    const run = store.create({ kind: "agent", task, background: false });
    run.settle({ outcome: "succeeded", value: 1 });
    expect(() => run.appendOutput("late")).toThrow(/already settled/);
    expect(() => run.settle({ outcome: "failed" })).toThrow(/already settled/);
  });
});
