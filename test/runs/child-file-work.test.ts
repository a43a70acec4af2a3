import { describe, expect, it, vi } from "vitest";
import { fileCalls } from "./file-calls.ts";
import { groupCommit } from "../../src/runs/write/group-commit.ts";
import { sandboxPerTest, type Sandbox } from "./helpers.ts";

// Every file-system call the run store makes goes through these counters (file-calls.ts).
vi.mock("node:fs", async (original) => (await import("./file-calls.ts")).countedFs(await original()));
vi.mock("node:fs/promises", async (original) => (await import("./file-calls.ts")).countedFsPromises(await original()));

let box: Sandbox;
sandboxPerTest((fresh) => (box = fresh));

/** What one step costs the disk, by call. */
function callsOf(step: () => void): Record<string, number> {
  fileCalls.clear();
  step();
  return Object.fromEntries(fileCalls);
}

describe("a child's file work on the host", () => {
  it("creating a run makes its folder and creates its journal, and looks at nothing else", async () => {
    const store = box.store();
    await groupCommit().idle();
    const calls = callsOf(() => store.create({ kind: "agent", task: { description: "child" }, background: false }));
    expect(calls).toEqual({ mkdirSync: 1, openSync: 1, writeSync: 1 });
  });

  it("settling a run reads nothing back: the view it returns comes from what its owner wrote", async () => {
    const store = box.store();
    const run = store.create({ kind: "agent", task: { description: "child" }, background: false });
    run.appendOutput("the answer");
    let view: unknown;
    const calls = callsOf(() => (view = run.settle({ outcome: "succeeded", value: "the answer" }).view));
    // The terminal line, and the journal's stamp taken through its open descriptor.
    expect(calls).toEqual({ writeSync: 1, fstatSync: 1 });
    expect(view).toMatchObject({ state: { status: "done", outcome: "succeeded" }, integrity: "complete" });
  });

  it("the group commit makes a settled run's journal and output log durable through the descriptors its writer held", async () => {
    const store = box.store();
    const run = store.create({ kind: "agent", task: { description: "child" }, background: false });
    await groupCommit().idle();
    run.appendOutput("the answer");
    run.settle({ outcome: "succeeded", value: "the answer" });
    fileCalls.clear();
    await groupCommit().idle();
    // Opened: the run's folder (fsynced: its entries name the journal and log) and the record's
    // new file (a cache, never fsynced). Closed: those two and the journal and output log, fsynced
    // through the descriptors handed over.
    expect((fileCalls.get("open") ?? 0) + (fileCalls.get("promises.open") ?? 0)).toBe(2);
    expect(fileCalls.get("fsync")).toBe(3);
    expect(fileCalls.get("close")).toBe(4);
    expect(store.view(run.runId)).toMatchObject({ state: { outcome: "succeeded" }, integrity: "complete" });
  });
});
