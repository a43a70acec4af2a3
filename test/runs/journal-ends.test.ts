import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openRunStore, RunRegistry } from "../../src/runs/index.ts";
import { runFiles } from "../../src/runs/home.ts";
import { readStartLine, readTerminalLine } from "../../src/runs/journal/journal-ends.ts";
import { expectValidView, sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
sandboxPerTest((fresh) => (box = fresh));

/** The same session seen from another process: nothing in memory, only what is on disk. */
const otherProcess = () => box.otherProcess();

/** An agent run that succeeded with `value`, its group-commit batch written: its ID and its files. */
async function settledRun(description: string, value: unknown, launch?: Record<string, unknown>) {
  const store = box.store();
  const run = store.create({ kind: "agent", task: { description }, background: false, ...(launch ? { launch } : {}) });
  run.settle({ outcome: "succeeded", value });
  await store.idle();
  return { runId: run.runId, files: runFiles(store.scope, run.runId) };
}

describe("a run's files", () => {
  it("a run settled with a small value is a folder with its journal and record only: launch and value travel in the journal", async () => {
    const run = await settledRun("small", "hi", { prompt: "Say hi", model: "faux" });
    const { files } = run;
    expect(readdirSync(files.dir).sort()).toEqual(["journal.jsonl", "record.json"]);

    const other = otherProcess();
    expect(other.view(run.runId).output).toEqual({ finalAvailable: true, delivery: "inline", value: "hi" });
    expect(JSON.parse(other.inspectSingle(run.runId, "launch").page.text)).toEqual({ prompt: "Say hi", model: "faux" });
    expect(other.inspectSingle(run.runId, "final").page.text).toBe("hi");

    // The record is a cache: without it the value is read from the terminal line.
    rmSync(files.record);
    const rebuilt = otherProcess().view(run.runId);
    expectValidView(rebuilt);
    expect(rebuilt.output).toEqual({ finalAvailable: true, delivery: "inline", value: "hi" });
    expect(otherProcess().finalValue(run.runId)).toEqual({ ok: true, value: "hi" });
  });

  it("a value too large to go inline goes to its final file and is delivered by reference", async () => {
    const big = "z".repeat(40_000);
    const run = await settledRun("large", big);
    const { files } = run;
    expect(readFileSync(files.final, "utf8")).toBe(big);
    expect(readFileSync(files.journal, "utf8")).not.toContain("zzzz");
    const other = otherProcess();
    expect(other.view(run.runId).output).toEqual({ finalAvailable: true, delivery: "reference" });
    expect(other.finalValue(run.runId)).toEqual({ ok: true, value: big });
  });

  it("a short answer whose run folder was deleted before it settled stays in memory, however many runs settle after it", () => {
    const registry = new RunRegistry({ maxSettled: 2 });
    const store = openRunStore({ home: box.home, cwd: box.project, sessionId: "session-a", registry });
    const lost = store.create({ kind: "agent", task: { description: "lost" }, background: false });
    rmSync(runFiles(store.scope, lost.runId).dir, { recursive: true });
    expect(lost.settle({ outcome: "succeeded", value: "kept in memory" }).evidenceErrors).not.toEqual([]);
    for (let i = 0; i < 3; i++) store.create({ kind: "agent", task: { description: `later ${i}` }, background: false }).settle({ outcome: "succeeded", value: i });
    expect(store.view(lost.runId).output).toEqual({ finalAvailable: true, delivery: "inline", value: "kept in memory" });
  });

  it("a run recorded before the launch details moved into the start line still shows them from its launch.json", async () => {
    const run = await settledRun("earlier", "ok");
    const { files } = run;
    // As an earlier pi-flow wrote it: no launch in the start line, a launch.json beside the journal.
    const [first, ...rest] = readFileSync(files.journal, "utf8").split("\n");
    const { launch: _moved, ...start } = JSON.parse(first!) as Record<string, unknown>;
    writeFileSync(files.journal, [JSON.stringify(start), ...rest].join("\n"));
    writeFileSync(join(files.dir, "launch.json"), `${JSON.stringify({ prompt: "from before" }, null, 2)}\n`);
    expect(JSON.parse(otherProcess().inspectSingle(run.runId, "launch").page.text)).toEqual({ prompt: "from before" });
  });

  it("a small value whose journal and record are both lost is not claimed", async () => {
    const run = await settledRun("lost", "gone");
    const { files } = run;
    const record = JSON.parse(readFileSync(files.record, "utf8")) as Record<string, unknown>;
    delete record.finalValue;
    writeFileSync(files.record, JSON.stringify(record));
    rmSync(files.journal);
    const view = otherProcess().view(run.runId);
    expect(view.state.outcome).toBe("succeeded");
    expect(view.output).toEqual({ finalAvailable: false, delivery: "none" });
  });
});

describe("the journal's first and last lines", () => {
  it("reads lines longer than its first window, and nothing from a torn or foreign journal", async () => {
    const store = box.store();
    const prompt = `long ${"é".repeat(30_000)}`; // two bytes a character: the start line spans several windows
    const run = store.create({ kind: "workflow", task: { description: "long" }, background: false, launch: { prompt } });
    for (let i = 0; i < 50; i++) run.journal({ t: "store", key: `k${i}`, value: "v".repeat(1000) });
    const value = { text: "ü".repeat(7000) };
    run.settle({ outcome: "succeeded", value });
    await store.idle();
    const { journal } = runFiles(store.scope, run.runId);
    expect(readStartLine(journal, run.runId)?.launch).toEqual({ prompt });
    expect(readTerminalLine(journal, run.runId)).toMatchObject({ t: "terminal", outcome: "succeeded", finalValue: value });
    expect(readStartLine(journal, "wf_0mx1xga91_0000000000")).toBeUndefined();

    const text = readFileSync(journal, "utf8");
    writeFileSync(journal, text.slice(0, -10)); // the terminal line's write never finished
    expect(readTerminalLine(journal, run.runId)).toBeUndefined();
    expect(readStartLine(journal, run.runId)?.t).toBe("start");
    writeFileSync(journal, text.slice(0, 100)); // not even the start line is whole
    expect(readStartLine(journal, run.runId)).toBeUndefined();
    rmSync(journal);
    expect(readStartLine(journal, run.runId)).toBeUndefined();
  });
});
