import { closeSync, openSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runFiles } from "../../src/runs/home.ts";
import type { RunStore } from "../../src/runs/index.ts";
import { classifyJournalText } from "../../src/runs/journal/integrity.ts";
import { sandboxPerTest, type Sandbox } from "./helpers.ts";

// Count full journal classifications (each one is a whole-file read) without changing what they return.
vi.mock("../../src/runs/journal/integrity.ts", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/runs/journal/integrity.ts")>();
  return { ...actual, classifyJournalText: vi.fn(actual.classifyJournalText) };
});

const classify = vi.mocked(classifyJournalText);
const readsOf = (runId: string): number => classify.mock.calls.filter(([, id]) => id === runId).length;

let box: Sandbox;
sandboxPerTest((fresh) => (box = fresh));

/** Another process's view of the same session: nothing of the writer's registry is shared. */
const fresh = (): RunStore =>
  box.otherProcess();

/** A settled workflow whose journal has body lines between start and terminal. */
async function settledWorkflow(): Promise<{ runId: string; journal: string }> {
  const store = box.store();
  const run = store.create({ kind: "workflow", task: { description: "wf" }, background: false });
  for (let i = 0; i < 3; i++) run.journal({ t: "child", childRunId: `ag_0mx1xga91_abcdefghi${i}`, event: `e${i}` });
  run.settle({ outcome: "succeeded", value: 1 });
  await store.idle(); // the settled record is written by the group commit
  return { runId: run.runId, journal: runFiles(store.scope, run.runId).journal };
}

/** Overwrite journal line `index` (0-based) in place with garbage of exactly the same length. */
function garbleLine(path: string, index: number): void {
  const text = readFileSync(path, "utf8");
  const lines = text.split("\n");
  const offset = Buffer.byteLength(lines.slice(0, index).map((l) => `${l}\n`).join(""));
  const garbage = "#".repeat(Buffer.byteLength(lines[index] ?? ""));
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, garbage, offset);
  } finally {
    closeSync(fd);
  }
  expect(statSync(path).size).toBe(Buffer.byteLength(text)); // same size: a size-only cache is fooled
}

describe("settled journals: the record's cached integrity", () => {
  it("serves a settled run without reading its journal", async () => {
    const { runId } = await settledWorkflow();
    const store = fresh();
    expect(store.view(runId).integrity).toBe("complete");
    expect(store.list().workflows.map((row) => row.integrity)).toEqual(["complete"]);
    expect(readsOf(runId)).toBe(0);
  });

  it("notices a same-size overwrite of a middle line made after settling", async () => {
    const { runId, journal } = await settledWorkflow();
    const settledAt = statSync(journal);
    garbleLine(journal, 2);
    // The edit happens later than the settle; pin its time so the test does not race the clock tick.
    utimesSync(journal, settledAt.atime, new Date(settledAt.mtimeMs + 1000));
    const store = fresh();
    expect(store.view(runId)).toMatchObject({ state: { outcome: "succeeded" }, integrity: "damaged" });
    expect(store.list().workflows[0]?.integrity).toBe("damaged");
  });

  it("notices a same-size rewrite by rename that restores the old modification time", async () => {
    const { runId, journal } = await settledWorkflow();
    const settledAt = statSync(journal);
    const text = readFileSync(journal, "utf8").split("\n");
    text[1] = "%".repeat(text[1]?.length ?? 0);
    const tmp = join(runFiles(box.store().scope, runId).dir, "edited.tmp");
    writeFileSync(tmp, text.join("\n"));
    renameSync(tmp, journal); // what an editor or `sed -i` does
    utimesSync(journal, settledAt.atime, settledAt.mtime);
    expect(fresh().view(runId).integrity).toBe("damaged");
  });

  it("does not trust a size-only cache from an older record", async () => {
    const { runId, journal } = await settledWorkflow();
    const recordPath = runFiles(box.store().scope, runId).record;
    const record = JSON.parse(readFileSync(recordPath, "utf8")) as { journal: { bytes: number; integrity: string } };
    record.journal = { bytes: record.journal.bytes, integrity: record.journal.integrity };
    writeFileSync(recordPath, JSON.stringify(record));
    garbleLine(journal, 1);
    expect(fresh().view(runId).integrity).toBe("damaged");
  });
});

describe("interrupted runs: the in-process memo", () => {
  it("classifies an unchanged journal once, however many pages and rows ask", () => {
    const store = box.store();
    const run = store.create({ kind: "workflow", task: { description: "wf" }, background: false });
    run.journal({ t: "event", name: "seed", data: 1 });
    const reader = fresh(); // the owner is not live here: to this reader the run is interrupted
    expect(reader.view(run.runId)).toMatchObject({ state: { status: "interrupted_or_uncertain" }, integrity: "incomplete" });
    reader.view(run.runId);
    reader.inspectSingle(run.runId, "summary");
    expect(reader.list().workflows.map((row) => row.integrity)).toEqual(["incomplete"]);
    fresh().view(run.runId);
    expect(readsOf(run.runId)).toBe(1);

    // Growth changes the stamp: the next reader re-reads and still classifies correctly.
    run.journal({ t: "event", name: "tick", data: 2 });
    expect(fresh().view(run.runId).integrity).toBe("incomplete");
    expect(readsOf(run.runId)).toBe(2);

    // A same-size overwrite made later is seen too.
    const journal = runFiles(store.scope, run.runId).journal;
    const before = statSync(journal);
    garbleLine(journal, 1);
    utimesSync(journal, before.atime, new Date(before.mtimeMs + 1000));
    expect(fresh().view(run.runId).integrity).toBe("damaged");
    expect(readsOf(run.runId)).toBe(3);
  });

  it("hands each reader its own copy of the memoised lines", () => {
    const store = box.store();
    const run = store.create({ kind: "agent", task: { description: "original" }, background: false });
    rmRecord(store, run.runId); // the task then comes from the journal's start line
    const first = fresh().view(run.runId);
    first.task.description = "edited by a caller";
    expect(fresh().view(run.runId).task.description).toBe("original");
  });
});

function rmRecord(store: RunStore, runId: string): void {
  writeFileSync(runFiles(store.scope, runId).record, "not json");
}
