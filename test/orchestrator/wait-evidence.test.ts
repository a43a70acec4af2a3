import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { basename } from "node:path";
import { afterEach, expect, test } from "vitest";
import { ResultOwnership } from "../../src/orchestrator/session/ownership.ts";
import { waitForRuns } from "../../src/orchestrator/session/wait.ts";
import { RunRegistry, openRunStore } from "../../src/runs/index.ts";
import { sandbox, type Sandbox } from "../runs/helpers.ts";

let box: Sandbox | undefined;
const realReadFileSync = fs.readFileSync;
const realOpenSync = fs.openSync;
afterEach(() => {
  fs.readFileSync = realReadFileSync;
  fs.openSync = realOpenSync;
  syncBuiltinESMExports();
  box?.cleanup();
});

/** Records the base name of every file pi-flow opens or reads from now on (the real calls still run). */
function recordOpenedFiles(): string[] {
  const opened: string[] = [];
  const note = (path: unknown) => {
    if (typeof path === "string") opened.push(basename(path));
  };
  fs.readFileSync = ((path: fs.PathOrFileDescriptor, options?: unknown) => (note(path), realReadFileSync(path, options as never))) as typeof fs.readFileSync;
  fs.openSync = ((path: fs.PathLike, ...rest: [fs.OpenMode, fs.Mode]) => (note(path), realOpenSync(path, ...rest))) as typeof fs.openSync;
  syncBuiltinESMExports();
  return opened;
}

/**
 * The contract's wait row: "No evidence is read once the budget is spent." Each target's record is
 * read once before waiting: that is the check that it exists and can complete (run_unavailable,
 * run_not_live), and it carries the run's state. Every durable target is delivered by reference, so
 * nothing else (final value, journal, diagnostics) is read for it, within the budget or past it.
 */
test("external_runs payloads, wait: no evidence is read once the budget is spent; durable targets read only their record", async () => {
  box = sandbox();
  const earlier = box.store();
  const runIds = ["first", "second", "third"].map((value) => {
    const writer = earlier.create({ kind: value === "second" ? "workflow" : "agent", background: true, task: { description: value } });
    // The third is over 16 KiB: its value lives in a final file of its own.
    writer.settle({ outcome: "succeeded", value: `${value} ${"x".repeat(value === "third" ? 20_000 : 2_000)}` });
    return writer.runId;
  });
  await earlier.idle();
  // Another process: these runs are durable evidence, not held in its memory.
  const store = openRunStore({ home: box.home, cwd: box.project, sessionId: "session-a", registry: new RunRegistry() });
  const opened = recordOpenedFiles();
  const { payload } = await waitForRuns(store, new ResultOwnership(() => undefined), { runIds, limitBytes: 600 }, undefined);
  expect(payload.completed.map((run) => run.output)).toEqual(runIds.map(() => ({ finalAvailable: true, delivery: "reference" })));
  expect(opened).toEqual(["record.json", "record.json", "record.json"]);
});
