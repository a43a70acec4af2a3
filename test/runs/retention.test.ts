import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { describe, expect, it, onTestFinished } from "vitest";
import { runFiles } from "../../src/runs/home.ts";
import { hostname } from "node:os";
import { join } from "node:path";
import { sessionsDir } from "../../src/runs/home.ts";
import {
  DEFAULT_RETENTION,
  openRunStore,
  prune,
  resolveRetention,
  RunRegistry,
  sessionClosed,
  sessionOpened,
  type RunStore,
} from "../../src/runs/index.ts";
import { processStart } from "../../src/runs/process-identity.ts";
import { codeOf, sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
let store: RunStore;
sandboxPerTest((fresh, freshStore) => ((box = fresh), (store = freshStore)));

const DAY = 24 * 3600 * 1000;

/** Another live process of this host, idle, whose ID a record can name; killed when the test ends. */
function otherLiveProcess(): ChildProcess {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
  onTestFinished(() => void child.kill("SIGKILL"));
  return child;
}

/**
 * Writes `text` (a record as read at some moment) back as the record at `path`, owned by `pid`: by
 * that process as it runs now (its start time), or, with `start`, by one that started at another time.
 */
function ownRecord(path: string, text: string, pid: number, start = processStart(pid)): { status: string; owner: { pid: number } } {
  const record = JSON.parse(text) as { status: string; owner: { pid: number; start?: string } };
  record.owner.pid = pid;
  if (start === undefined) delete record.owner.start;
  else record.owner.start = start;
  writeFileSync(path, JSON.stringify(record));
  return record;
}

function settled(n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const w = store.create({ kind: "agent", task: { description: `r${i}` }, background: false });
    w.settle({ outcome: "succeeded", value: i });
    return w.runId;
  });
}

describe("retention", () => {
  it("prunes by count, newest kept, and pruned runs become run_unavailable", async () => {
    const ids = settled(5);
    const report = await store.prune({ maxAgeMs: Infinity, maxRuns: 2 });
    expect(report).toEqual({ removed: 3, kept: 2, live: 0 });
    expect(store.list().runs.map((r) => r.runId)).toEqual([ids[4], ids[3]]);
    expect(codeOf(() => store.view(ids[0]))).toBe("run_unavailable");
  });

  it("prunes by age of the end time", async () => {
    const [old, recent] = settled(2);
    await store.idle(); // the settled records are written by the group commit
    const now = Date.now() + 10 * DAY;
    // Make `recent` end later than it did.
    const files = runFiles(store.scope, recent as string);
    const record = JSON.parse(readFileSync(files.record, "utf8")) as { endedAt: string };
    record.endedAt = new Date(now - DAY).toISOString();
    writeFileSync(files.record, JSON.stringify(record));
    const report = await store.prune({ maxAgeMs: 5 * DAY, maxRuns: Infinity }, now);
    expect(report.removed).toBe(1);
    expect(existsSync(runFiles(store.scope, old as string).dir)).toBe(false);
    expect(existsSync(files.dir)).toBe(true);
  });

  it("never touches a live run, whatever its age or rank", async () => {
    const live = store.create({ kind: "workflow", task: { description: "live" }, background: true });
    settled(3);
    const report = await store.prune({ maxAgeMs: 0, maxRuns: 0 }, Date.now() + 365 * DAY);
    expect(report).toEqual({ removed: 3, kept: 0, live: 1 });
    expect(store.view(live.runId).live).toBe(true);
    live.settle({ outcome: "succeeded", value: 1 });
  });

  it("leaves an unfinished run alone while its owner process (another one) is alive", async () => {
    const child = otherLiveProcess();
    const run = store.create({ kind: "agent", task: { description: "owned elsewhere" }, background: true });
    const files = runFiles(store.scope, run.runId);
    await store.idle();
    ownRecord(files.record, readFileSync(files.record, "utf8"), child.pid as number);
    const otherProcess = new RunRegistry(); // this process does not own it
    const policy = { maxAgeMs: 0, maxRuns: 0 };
    expect(await prune(box.home, policy, { registry: otherProcess, now: Date.now() + DAY })).toMatchObject({ removed: 0, live: 1 });
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    expect(await prune(box.home, policy, { registry: otherProcess, now: Date.now() + DAY })).toMatchObject({ removed: 1, live: 0 });
  });

  it("leaves a run another process has just created alone while its record is not written yet, and removes it once its creator is long gone", async () => {
    const run = store.create({ kind: "agent", task: { description: "just created elsewhere" }, background: true });
    const files = runFiles(store.scope, run.runId);
    await store.idle();
    unlinkSync(files.record); // as it stands between the other process's create and its group commit
    const otherProcess = new RunRegistry();
    const policy = { maxAgeMs: 0, maxRuns: 0 };
    expect(await prune(box.home, policy, { registry: otherProcess, now: Date.now() })).toMatchObject({ removed: 0, live: 1 });
    expect(existsSync(files.dir)).toBe(true);
    expect(await prune(box.home, policy, { registry: otherProcess, now: Date.now() + DAY })).toMatchObject({ removed: 1, live: 0 });
    run.settle({ outcome: "succeeded", value: 1 });
  });

  it("takes an unfinished run for ownerless when a live process has its owner's ID but started at another time (an ID reused after a restart)", async () => {
    const stranger = otherLiveProcess();
    const run = store.create({ kind: "agent", task: { description: "its owner died, its ID lives on" }, background: true });
    const files = runFiles(store.scope, run.runId);
    await store.idle();
    ownRecord(files.record, readFileSync(files.record, "utf8"), stranger.pid as number, "1"); // started at tick 1: not the stranger
    const reader = box.otherProcess();
    expect(reader.ownedElsewhere(run.runId)).toBe(false);
    const otherProcess = new RunRegistry();
    expect(await prune(box.home, { maxAgeMs: 0, maxRuns: 0 }, { registry: otherProcess, now: Date.now() + DAY })).toMatchObject({ removed: 1, live: 0 });
    run.settle({ outcome: "succeeded", value: 1 });
  });

  it("believes a journal that ended over a record a power loss left behind it, whatever process holds the record's owner ID now", async () => {
    const other = otherLiveProcess();
    const run = store.create({ kind: "workflow", task: { description: "settled before the power went" }, background: true });
    const files = runFiles(store.scope, run.runId);
    await store.idle();
    const running = readFileSync(files.record, "utf8"); // the record as first written: running
    run.settle({ outcome: "succeeded", value: 1 });
    await store.idle();
    // The power loss: the settled record's rewrite never reached the disk, and after the reboot
    // the owner's process ID belongs to another live process.
    expect(ownRecord(files.record, running, other.pid as number).status).toBe("running");
    const otherProcess = new RunRegistry();
    const reader = box.otherProcess();
    expect(reader.ownedElsewhere(run.runId)).toBe(false);
    expect(reader.view(run.runId).state).toMatchObject({ status: "done", outcome: "succeeded" });
    expect(await prune(box.home, { maxAgeMs: 0, maxRuns: 0 }, { registry: otherProcess, now: Date.now() + DAY })).toMatchObject({ removed: 1, live: 0 });
  });

  it("never removes a run of a session open in this process, settled or not, however many there are", async () => {
    const ids = settled(5);
    await sessionOpened(store.scope);
    try {
      const report = await store.prune({ maxAgeMs: 0, maxRuns: 0 }, Date.now() + 365 * DAY);
      expect(report).toEqual({ removed: 0, kept: 0, live: 5 });
      for (const id of ids) expect(store.view(id).state.outcome).toBe("succeeded");
    } finally {
      await sessionClosed(store.scope);
    }
    // Closed for good: its runs are ordinary candidates again.
    expect(await store.prune({ maxAgeMs: Infinity, maxRuns: 2 })).toEqual({ removed: 3, kept: 2, live: 0 });
  });

  it("leaves the runs of a session open in another live process alone, and ignores a dead process's marker", async () => {
    const ids = settled(3);
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    const marker = join(sessionsDir(store.scope.home, store.scope.projectKey), store.scope.sessionKey, "owner.json");
    try {
      writeFileSync(marker, JSON.stringify({ pid: child.pid, host: hostname(), openedAt: new Date().toISOString() }));
      const policy = { maxAgeMs: 0, maxRuns: 0 };
      expect(await prune(box.home, policy, { registry: new RunRegistry() })).toMatchObject({ removed: 0, live: 3 });
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
      expect(await prune(box.home, policy, { registry: new RunRegistry() })).toMatchObject({ removed: 3, live: 0 });
      for (const id of ids) expect(existsSync(runFiles(store.scope, id).dir)).toBe(false);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("prunes across the whole home or one project", async () => {
    settled(2);
    const otherProject = openRunStore({ home: box.home, cwd: box.root, sessionId: "x", registry: box.registry });
    const w = otherProject.create({ kind: "agent", task: { description: "o" }, background: false });
    w.settle({ outcome: "succeeded", value: 1 });
    expect((await store.prune({ maxAgeMs: Infinity, maxRuns: 0 })).removed).toBe(2);
    expect(otherProject.view(w.runId).runId).toBe(w.runId);
    expect((await prune(box.home, { maxAgeMs: Infinity, maxRuns: 0 }, { registry: box.registry })).removed).toBe(1);
  });

  it("serves the host's session-start call: store.prune(resolveRetention(settings, env)) for this project only", async () => {
    const ids = settled(3);
    const otherProject = openRunStore({ home: box.home, cwd: box.root, sessionId: "x", registry: box.registry });
    const other = otherProject.create({ kind: "agent", task: { description: "o" }, background: false });
    other.settle({ outcome: "succeeded", value: 1 });
    const env = { PI_FLOW_RETENTION_MAX_RUNS: "1", PI_FLOW_RETENTION_DAYS: "0" };
    expect(await store.prune(resolveRetention({ retention: { maxRuns: 50 } }, env))).toEqual({ removed: 2, kept: 1, live: 0 });
    expect(store.list().runs.map((r) => r.runId)).toEqual([ids[2]]);
    expect(otherProject.view(other.runId).runId).toBe(other.runId);
  });

  it("is configured from settings, overridden by the environment", async () => {
    expect(resolveRetention()).toEqual(DEFAULT_RETENTION);
    expect(resolveRetention({ retention: { maxAgeDays: 7, maxRuns: 50 } })).toEqual({ maxAgeMs: 7 * DAY, maxRuns: 50 });
    expect(
      resolveRetention({ retention: { maxAgeDays: 7 } }, { PI_FLOW_RETENTION_DAYS: "1", PI_FLOW_RETENTION_MAX_RUNS: "10" }),
    ).toEqual({
      maxAgeMs: DAY,
      maxRuns: 10,
    });
    expect(resolveRetention({}, { PI_FLOW_RETENTION_DAYS: "0", PI_FLOW_RETENTION_MAX_RUNS: "0" })).toEqual({
      maxAgeMs: Infinity,
      maxRuns: Infinity,
    });
    expect(resolveRetention({ retention: { maxRuns: -3 } }, { PI_FLOW_RETENTION_DAYS: "soon" })).toEqual(DEFAULT_RETENTION);
  });
});
