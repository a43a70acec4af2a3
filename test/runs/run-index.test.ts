import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { runFiles } from "../../src/runs/home.ts";
import { containsRunId, insertionPoint } from "../../src/runs/read/run-index.ts";
import { sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;

/** Another process saves one run in the same session (the crash-test writer, killed once settled). */
function runSavedByAnotherProcess(): Promise<string> {
  return new Promise((resolve, reject) => {
    const writer = join(import.meta.dirname, "fixtures", "crash-writer.ts");
    const child = spawn(process.execPath, [writer, box.home, box.project, "session-a", "settled"], { stdio: ["ignore", "pipe", "inherit"] });
    let runId = "";
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.startsWith("run ")) runId = line.slice(4);
      if (line === "hanging") child.kill("SIGKILL");
    });
    child.on("exit", () => (runId ? resolve(runId) : reject(new Error("the writer saved no run"))));
  });
}
sandboxPerTest((fresh) => (box = fresh));

function settled(store: ReturnType<Sandbox["store"]>, n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const run = store.create({ kind: "agent", task: { description: `r${i}` }, background: false });
    run.settle({ outcome: "succeeded", value: i });
    return run.runId;
  });
}

describe("the saved-run index behind list", () => {
  it("pages through runs created between pages, newest first, without skipping or repeating", () => {
    const store = box.store();
    const first = settled(store, 5);
    const page1 = store.list({ limit: 3 });
    expect(page1.runs.map((r) => r.runId)).toEqual([first[4], first[3], first[2]]);
    const later = settled(store, 2); // newer than every bookmark: they wait for a fresh listing
    const page2 = store.list({ limit: 3, cursor: page1.nextCursor! });
    expect(page2.runs.map((r) => r.runId)).toEqual([first[1], first[0]]);
    expect(store.list({ limit: 10 }).runs.map((r) => r.runId)).toEqual([...later].reverse().concat([...first].reverse()));
  });

  it("sees what another process changed in the directory: a pruned run is gone, a run saved elsewhere appears", async () => {
    const store = box.store();
    const ids = settled(store, 3);
    expect(store.list().runs).toHaveLength(3);
    store.registry.release(ids[0]!);
    rmSync(runFiles(store.scope, ids[0]!).dir, { recursive: true });
    expect(store.list().runs.map((r) => r.runId)).toEqual([ids[2], ids[1]]);
    const foreign = await runSavedByAnotherProcess();
    expect(store.list().workflows.map((r) => r.runId)).toEqual([foreign]);
    expect(store.list().runs.map((r) => r.runId)).toEqual([ids[2], ids[1]]);
  });

  it("finds positions in a newest-first list by binary search", () => {
    const ids = ["ag_c", "ag_b", "ag_a"];
    expect(insertionPoint(ids, "ag_d")).toBe(0);
    expect(insertionPoint(ids, "ag_b")).toBe(1);
    expect(insertionPoint(ids, "ag_bb")).toBe(1);
    expect(insertionPoint(ids, "ag_0")).toBe(3);
    expect(containsRunId(ids, "ag_a")).toBe(true);
    expect(containsRunId(ids, "ag_bb")).toBe(false);
  });
});
