import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { FlowError } from "../../src/contract/errors.ts";
import { saveReport } from "../../src/report/save.ts";
import { openRunStore, RunRegistry } from "../../src/runs/index.ts";

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test("a report is written through no link planted where a temporary file could go", () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-save-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "a run" }, background: false });
  run.settle({ outcome: "succeeded", value: "done" });
  const victim = join(dir, "victim");
  writeFileSync(victim, "the user's own file\n");
  const target = join(dir, "report.html");
  // What a child that knows Pi's pid would plant: the temporary names an older build used.
  symlinkSync(victim, `${target}.${process.pid}.tmp`);
  symlinkSync(victim, join(dir, `.report.html.${process.pid}.tmp`));
  saveReport(store, run.runId, target);
  expect(readFileSync(victim, "utf8")).toBe("the user's own file\n");
  expect(lstatSync(target).isFile()).toBe(true);
  expect(statSync(target).mode & 0o777).toBe(0o600);
  expect(readFileSync(target, "utf8")).toContain(run.runId);
});

test("a FILE that is a folder is refused as request_invalid, with its path and why, and leaves no temporary file", () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-save-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "a run" }, background: false });
  run.settle({ outcome: "succeeded", value: "done" });
  const folder = join(dir, "reports");
  mkdirSync(folder);
  writeFileSync(join(folder, "kept"), "a file of the user's\n");
  let thrown: unknown;
  try {
    saveReport(store, run.runId, folder);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(FlowError);
  expect(thrown).toMatchObject({ code: "request_invalid", message: `Cannot write ${folder} (EISDIR).` });
  expect(readFileSync(join(folder, "kept"), "utf8")).toBe("a file of the user's\n");
  expect(readdirSync(dir).filter((name) => name !== "home" && name !== "reports")).toEqual([]);
});

test("a FILE that is a symbolic link is refused as request_invalid, as flow runs report --out refuses it, and the link is kept", () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-save-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "a run" }, background: false });
  run.settle({ outcome: "succeeded", value: "done" });
  const elsewhere = join(dir, "elsewhere.html");
  writeFileSync(elsewhere, "the user's own page\n");
  const target = join(dir, "report.html");
  symlinkSync(elsewhere, target);
  expect(() => saveReport(store, run.runId, target)).toThrow(expect.objectContaining({ code: "request_invalid", message: expect.stringContaining("is a symbolic link") }));
  expect(lstatSync(target).isSymbolicLink()).toBe(true);
  expect(readFileSync(elsewhere, "utf8")).toBe("the user's own page\n");
});
