/**
 * Retention removes a closed session's folder once its runs are gone: each `flow run` keeps its
 * own Pi session (flow-session.jsonl: the command's tool calls and their results) in a session
 * folder of its own, and those must not outlive the runs they belong to. The command ends its
 * session as Pi does on quit, so its owner marker is gone once it exits.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, expect, test } from "vitest";
import { prune, RunRegistry } from "../../src/runs/index.ts";
import { flowInProcess } from "./in-process.ts";
import { flowSandbox, QUICKSTART, type FlowSandbox } from "./support.ts";

const DAY = 24 * 3600 * 1000;
const sandboxes: FlowSandbox[] = [];
afterAll(() => sandboxes.forEach((sandbox) => sandbox.dispose()));

let sandbox: FlowSandbox;
beforeEach(() => void sandboxes.push((sandbox = flowSandbox())));

/** One `flow run` of a workflow with one (stubbed) child; returns its session folder. */
async function flowRun(): Promise<string> {
  const script = sandbox.file("one.js", 'export const apiVersion = 1;\nexport const meta = { name: "one" };\nreturn (await agent({ role: "worker", description: "d", prompt: "p", context: { mode: "none" } })).value;');
  const before = new Set(sessionFolders());
  const result = await flowInProcess(["run", script, "--cwd", QUICKSTART, "--stub"], { env: sandbox.env });
  expect(result.code, result.stderr).toBe(0);
  const made = sessionFolders().filter((folder) => !before.has(folder));
  expect(made).toHaveLength(1);
  expect(readdirSync(made[0]!).sort()).toEqual(["flow-session.jsonl", "runs"]);
  return made[0]!;
}

function sessionFolders(): string[] {
  const projects = join(sandbox.flowHome, "projects");
  if (!existsSync(projects)) return [];
  return readdirSync(projects).flatMap((project) => readdirSync(join(projects, project, "sessions")).map((session) => join(projects, project, "sessions", session)));
}

const pruneAll = (policy: { maxAgeMs: number; maxRuns: number }, now = Date.now() + DAY) => prune(sandbox.flowHome, policy, { registry: new RunRegistry(), now });

test("a flow run's session folder, with its session file and marker, goes with its last run", async () => {
  const folder = await flowRun();
  expect(await pruneAll({ maxAgeMs: 0, maxRuns: 0 })).toEqual({ removed: 2, kept: 0, live: 0 });
  expect(existsSync(folder)).toBe(false);
});

test("trimmed by count: the newest run's session keeps its folder and file, the older one's goes", async () => {
  const older = await flowRun();
  const newer = await flowRun();
  expect(await pruneAll({ maxAgeMs: Infinity, maxRuns: 2 })).toEqual({ removed: 2, kept: 2, live: 0 });
  expect(existsSync(older)).toBe(false);
  expect(readdirSync(newer).sort()).toEqual(["flow-session.jsonl", "runs"]);
});

test("a session with no run but a recent session file is kept; after the age limit it goes", async () => {
  const folder = await flowRun();
  // Its runs gone already (removed by an earlier version of pi-flow's pass): nothing for this pass to remove.
  for (const name of readdirSync(join(folder, "runs"))) rmSync(join(folder, "runs", name), { recursive: true });
  expect(await pruneAll({ maxAgeMs: 2 * DAY, maxRuns: Infinity })).toEqual({ removed: 0, kept: 0, live: 0 });
  expect(existsSync(join(folder, "flow-session.jsonl"))).toBe(true);
  await pruneAll({ maxAgeMs: 2 * DAY, maxRuns: Infinity }, Date.now() + 3 * DAY);
  expect(existsSync(folder)).toBe(false);
});

test("an open session's folder stays, and so does a folder holding anything a session folder does not", async () => {
  const open = await flowRun();
  const other = await flowRun();
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
  try {
    writeFileSync(join(open, "owner.json"), JSON.stringify({ pid: child.pid, host: hostname(), openedAt: new Date().toISOString() }));
    writeFileSync(join(other, "notes.txt"), "mine");
    expect(await pruneAll({ maxAgeMs: 0, maxRuns: 0 })).toEqual({ removed: 2, kept: 0, live: 2 });
    expect(readdirSync(open).sort()).toEqual(["flow-session.jsonl", "owner.json", "runs"]);
    expect(readdirSync(other).sort()).toEqual(["flow-session.jsonl", "notes.txt", "runs"]);
  } finally {
    child.kill("SIGKILL");
  }
});
