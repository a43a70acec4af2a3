// What a child that can write in the Flow home, or a repository that ships files there, could plant
// in a run's folder in place of what pi-flow wrote: a link to a file of the user's, or a FIFO.
// Readers never follow the link and never block on the FIFO: the evidence reads as missing.
import { execFileSync } from "node:child_process";
import { readFileSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { runFiles } from "../../src/runs/home.ts";
import { MAX_PAGE_BYTES } from "../../src/runs/index.ts";
import { sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
sandboxPerTest((fresh) => (box = fresh));

const task = { description: "d", role: "worker", harness: "pi" };
const SECRET = "sk-proj-AbCdEf0123456789AbCdEf0123456789AbCdEf01";

async function settledRun() {
  const store = box.store();
  const run = store.create({ kind: "agent", task, background: false });
  run.appendOutput("hello");
  run.settle({ outcome: "succeeded", value: "ok" });
  await store.idle();
  return { store, runId: run.runId, files: runFiles(store.scope, run.runId) };
}

const pageText = (page: unknown) => (page as { page: { text: string } }).page.text;

it("a link planted as a run's output log is not followed: a file of the user's never reaches a page", async () => {
  const { store, runId, files } = await settledRun();
  expect(pageText(store.inspectSingle(runId, "output"))).toContain("hello");
  const outside = join(box.root, "outside.env");
  writeFileSync(outside, `OPENAI_API_KEY=${SECRET}\n`);
  unlinkSync(files.output);
  symlinkSync(outside, files.output);
  const page = store.inspectSingle(runId, "output") as { page: { text: string }; outputStatus?: string };
  // The page and its status agree: the log reads as missing.
  expect([page.page.text, page.outputStatus]).toEqual(["", "unavailable"]);
  expect(JSON.stringify(box.otherProcess().inspectBatch([runId]))).not.toContain(SECRET);
});

it("links planted as a run's final and diagnostics read as missing too: no final is offered, no diagnostics are counted", async () => {
  const store = box.store();
  const run = store.create({ kind: "agent", task, background: false });
  run.appendDiagnostic({ level: "warn", message: "kept" });
  run.settle({ outcome: "succeeded", value: "v".repeat(64 * 1024) }); // large enough to be saved as a file
  await store.idle();
  const files = runFiles(store.scope, run.runId);
  const outside = join(box.root, "outside.txt");
  writeFileSync(outside, `token ${SECRET}\n`);
  for (const file of [files.final, files.diagnostics]) {
    unlinkSync(file);
    symlinkSync(outside, file);
  }
  const other = box.otherProcess();
  const final = other.inspectSingle(run.runId, "final") as { page: { text: string }; finalAvailable?: boolean };
  expect([final.page.text, final.finalAvailable]).toEqual(["", false]);
  const [view] = other.inspectBatch([run.runId]).entries;
  expect(view!.refs.diagnostics).toBeUndefined();
  expect(JSON.stringify(view)).not.toContain(SECRET);
});

it("a FIFO planted as a run's record does not hold a listing: the run is read from its journal", async () => {
  const { runId, files } = await settledRun();
  unlinkSync(files.record);
  execFileSync("mkfifo", [files.record]);
  // No writer ever opens the FIFO: a blocking open would never return.
  const listed = box.otherProcess().list();
  expect(listed.runs.map((run) => [run.runId, run.state.outcome])).toEqual([[runId, "succeeded"]]);
});

it("a FIFO planted as a journal holds neither inspect nor the session-start prune", async () => {
  const store = box.store();
  const run = store.create({ kind: "agent", task, background: false });
  await store.idle();
  const files = runFiles(store.scope, run.runId);
  // Another process's view: a record that names a dead owner, and a journal replaced by a FIFO.
  const record = JSON.parse(readFileSync(files.record, "utf8")) as { owner: { pid: number; host: string } };
  record.owner.pid = 999_999_999;
  writeFileSync(files.record, JSON.stringify(record));
  unlinkSync(files.journal);
  execFileSync("mkfifo", [files.journal]);
  const other = box.otherProcess();
  expect(JSON.stringify(other.inspectBatch([run.runId]))).toContain(run.runId);
  await other.prune({ maxAgeMs: Infinity, maxRuns: Infinity });
});

it("a page is at most MAX_PAGE_BYTES whatever limitBytes asks, and the rest follows by cursor", async () => {
  const { store, runId, files } = await settledRun();
  truncateSync(files.output, MAX_PAGE_BYTES + 1024); // sparse: costs no disk
  const first = store.inspectSingle(runId, "output", { limitBytes: 2 ** 40 }) as { page: { text: string; complete: boolean; nextCursor?: string } };
  expect(Buffer.byteLength(first.page.text)).toBe(MAX_PAGE_BYTES);
  expect(first.page.complete).toBe(false);
  const second = store.inspectSingle(runId, "output", { cursor: first.page.nextCursor! }) as { page: { text: string; complete: boolean } };
  expect(Buffer.byteLength(second.page.text)).toBe(1024);
  expect(second.page.complete).toBe(true);
});
