// The repository lock across processes: two pi-flow processes never change a repository's worktrees
// at once, and a lock left by a process that died is taken over. Real processes, real files.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, realpathSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { changesCommand } from "../../src/commands/changes.ts";
import { FlowError } from "../../src/contract/errors.ts";
import { changeRuns } from "../../src/isolation/apply-runs.ts";
import { readChangeRecord } from "../../src/isolation/change-record.ts";
import { finishIsolation, isolationWorktree, startIsolation } from "../../src/isolation/child-isolation.ts";
import { cleanupIsolation } from "../../src/isolation/cleanup.ts";
import { ownerFile, worktreesDir } from "../../src/isolation/worktree.ts";
import { withRepositoryLock } from "../../src/isolation/repository-lock.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { openRunStore, RunRegistry, runFiles } from "../../src/runs/index.ts";
import { makeRepo, worktreeCount } from "../support/git-repo.ts";
import { keptRun } from "../support/kept-run.ts";
import { PROJECT_ROOT, startPiSession } from "../support/pi-session.ts";

/**
 * Another process takes the lock of the repository at argv[1], says "held", and holds it until a
 * line arrives on its stdin; then, still holding it, writes argv[2] ("done") and lets go.
 */
const HOLDER = `
  const { withRepositoryLock } = await import(${JSON.stringify(join(PROJECT_ROOT, "src/isolation/repository-lock.ts"))});
  const { writeFileSync } = await import("node:fs");
  const { once } = await import("node:events");
  await withRepositoryLock(process.argv[1], async () => {
    console.log("held");
    await once(process.stdin, "data");
    writeFileSync(process.argv[2], "done");
  });
  process.exit(0);
`;

async function holder(commonDir: string, marker: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", HOLDER, commonDir, marker], { stdio: ["pipe", "pipe", "inherit"] });
  const [line] = (await once(child.stdout!, "data")) as [Buffer];
  expect(line.toString().trim()).toBe("held");
  return child;
}

test("a second process waits for the first to let go of a repository's lock, which names its owner", async () => {
  const repo = await openRepository(makeRepo());
  const lockFile = join(repo.commonDir, "pi-flow-worktrees.lock");
  const marker = join(repo.root, "holder-done");
  const first = await holder(repo.commonDir, marker);
  expect(JSON.parse(readFileSync(lockFile, "utf8"))).toMatchObject({ pid: first.pid });

  const mine = withRepositoryLock(repo.commonDir, async () => existsSync(marker));
  const exited = once(first, "exit"); // listened for first: it may exit before `mine` resolves
  first.stdin!.write("go\n");
  expect(await mine).toBe(true); // ran only after the other process had finished its work
  await exited;
  expect(existsSync(lockFile)).toBe(false);
});

test("a lock left by a process that was SIGKILLed while holding it is taken over", async () => {
  const repo = await openRepository(makeRepo());
  const lockFile = join(repo.commonDir, "pi-flow-worktrees.lock");
  const dead = await holder(repo.commonDir, join(repo.root, "never"));
  dead.kill("SIGKILL");
  await once(dead, "exit");
  expect(JSON.parse(readFileSync(lockFile, "utf8"))).toMatchObject({ pid: dead.pid }); // left behind

  expect(await withRepositoryLock(repo.commonDir, async () => JSON.parse(readFileSync(lockFile, "utf8")) as { pid: number })).toMatchObject({ pid: process.pid });
  expect(existsSync(lockFile)).toBe(false);
});

test("a lock left before the machine restarted, or by a process whose ID a live process now has, is taken over", async () => {
  const repo = await openRepository(makeRepo());
  const lockFile = join(repo.commonDir, "pi-flow-worktrees.lock");
  // A live process of this host now has the ID the dead owner had (IDs start over after a restart, and wrap).
  const reused = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)"], { stdio: "ignore" });
  await once(reused, "spawn");
  try {
    const own = JSON.parse(await withRepositoryLock(repo.commonDir, async () => readFileSync(lockFile, "utf8"))) as { boot: string; start: string };
    for (const left of [{ boot: "the boot before the restart" }, { boot: own.boot, start: "1" }]) {
      writeFileSync(lockFile, JSON.stringify({ pid: reused.pid, host: hostname(), ...left }));
      expect(await withRepositoryLock(repo.commonDir, async () => JSON.parse(readFileSync(lockFile, "utf8")) as { pid: number })).toMatchObject({ pid: process.pid });
    }
    expect(existsSync(lockFile)).toBe(false);
  } finally {
    reused.kill("SIGKILL");
  }
}, 20_000);

test("a live process that hangs holding the lock is named to a waiter, who gives up after its patience; an apply says so and changes nothing", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const repo = await openRepository(root);
  const store = openRunStore({ home: join(root, ".git", "flow-home"), cwd: root, sessionId: "s", registry: new RunRegistry() });
  const runId = await keptRun(store, root, { "a.txt": "child a\n" });
  const hung = await holder(repo.commonDir, join(repo.root, "holder-done"));
  try {
    const told: string[] = [];
    let ran = false;
    const waited = withRepositoryLock(repo.commonDir, async () => (ran = true), { patienceMs: 400, noticeMs: 50, onWaiting: (text) => told.push(text) });
    const error = (await waited.catch((caught: unknown) => caught)) as FlowError;
    expect(error).toBeInstanceOf(FlowError);
    expect(error.code).toBe("run_unavailable");
    const named = new RegExp(`held by pi-flow process ${hung.pid} on host ${JSON.stringify(hostname())}, since \\d{4}-\\d\\d-\\d\\dT`);
    expect(error.message).toMatch(named);
    expect(error.message).toContain("still running; gave up after 0 s. Nothing was changed");
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(named);
    expect(ran).toBe(false);

    const applying = (await changeRuns(store, "apply", [runId], { patienceMs: 400 }).catch((caught: unknown) => caught)) as FlowError;
    expect(applying.code).toBe("run_unavailable");
    expect(applying.message).toMatch(named);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
    expect(readChangeRecord(runFiles(store.scope, runId))?.state).toBe("kept");
  } finally {
    const exited = once(hung, "exit");
    hung.stdin!.write("go\n");
    await exited;
  }
  // Once it lets go, the run applies.
  expect(await changeRuns(store, "apply", [runId])).toEqual([{ runId, status: "applied", files: ["a.txt"] }]);
}, 30_000);

test("a lock file left empty, torn (its process died between making and writing it) or made a FIFO is taken over once it is old, not waited for forever", async () => {
  const repo = await openRepository(makeRepo());
  const lockFile = join(repo.commonDir, "pi-flow-worktrees.lock");
  const aMinuteAgo = new Date(Date.now() - 60_000);
  for (const left of ["", '{"pid": 12']) {
    writeFileSync(lockFile, left);
    utimesSync(lockFile, aMinuteAgo, aMinuteAgo);
    expect(await withRepositoryLock(repo.commonDir, async () => JSON.parse(readFileSync(lockFile, "utf8")) as { pid: number })).toMatchObject({ pid: process.pid });
  }
  // A FIFO a worktree child's bash put there (the shared git folder): read without waiting on it, so taken over the same way.
  execFileSync("mkfifo", [lockFile]);
  utimesSync(lockFile, aMinuteAgo, aMinuteAgo);
  expect(await withRepositoryLock(repo.commonDir, async () => JSON.parse(readFileSync(lockFile, "utf8")) as { pid: number })).toMatchObject({ pid: process.pid });
  expect(existsSync(lockFile)).toBe(false);
}, 20_000);

test("a live process that hangs holding the lock is named to a worktree child's run, which gives up making its worktree; one settling keeps its changes and leaves its worktree; crash cleanup gives up too", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const repo = await openRepository(root);
  const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const told: { level: string; code: string; message: string }[] = [];
  const evidence = { appendDiagnostic: (entry: { level: string; code: string; message: string }) => void told.push(entry) };
  const lockWait = { patienceMs: 400, noticeMs: 50 };
  const settling = store.create({ kind: "agent", task: { description: "writes" }, background: false });
  const writing = startIsolation(repo, settling.runId, home, { evidence, lockWait });
  const worktree = await isolationWorktree(writing); // made before the other process takes the lock
  writeFileSync(join(worktree.path, "a.txt"), "child a\n");

  const hung = await holder(repo.commonDir, join(root, "holder-done"));
  const named = new RegExp(`held by pi-flow process ${hung.pid} on host ${JSON.stringify(hostname())}`);
  try {
    const queued = store.create({ kind: "agent", task: { description: "waits" }, background: false });
    const making = (await isolationWorktree(startIsolation(repo, queued.runId, home, { evidence, lockWait })).catch((caught: unknown) => caught)) as FlowError;
    expect(making).toBeInstanceOf(FlowError);
    expect(making.code).toBe("run_unavailable");
    expect(making.message).toMatch(named);
    expect(making.message).toContain(`making run ${queued.runId}'s worktree`);
    expect(told).toEqual([expect.objectContaining({ level: "info", code: "repository_lock", message: expect.stringMatching(named) })]);
    expect(worktreeCount(root)).toBe(2); // the first child's only

    const stats = await finishIsolation(writing, runFiles(store.scope, settling.runId), home, evidence);
    expect(stats).toMatchObject({ files: 1 }); // kept, and applicable once the lock is free
    expect(readChangeRecord(runFiles(store.scope, settling.runId))?.state).toBe("kept");
    expect(told.at(-1)).toMatchObject({ level: "warn", code: "worktree_left", message: expect.stringMatching(named) });
    expect(existsSync(worktree.path)).toBe(true);
    expect(existsSync(ownerFile(worktreesDir(home, root), settling.runId))).toBe(true); // for crash cleanup to find

    const cleaning = (await cleanupIsolation(home, root, lockWait).catch((caught: unknown) => caught)) as FlowError;
    expect(cleaning.code).toBe("run_unavailable");
    expect(cleaning.message).toMatch(named);
  } finally {
    const exited = once(hung, "exit");
    hung.stdin!.write("go\n");
    await exited;
  }
  settling.settle({ outcome: "succeeded", value: "done" });
  expect(await changeRuns(store, "apply", [settling.runId])).toEqual([{ runId: settling.runId, status: "applied", files: ["a.txt"] }]);
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("child a\n");
}, 30_000);

test("/flow apply names the process that holds the repository lock while it waits, then applies once it lets go", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const repo = await openRepository(root);
  const store = openRunStore({ home: join(root, ".git", "flow-home"), cwd: root, sessionId: "s", registry: new RunRegistry() });
  const runId = await keptRun(store, root, { "a.txt": "child a\n" });
  const hung = await holder(repo.commonDir, join(root, "holder-done"));
  const shown: string[] = [];
  let named: () => void = () => undefined;
  const waiting = new Promise<void>((resolve) => (named = resolve));
  const ctx = { hasUI: true, ui: { confirm: async () => true } } as unknown as ExtensionCommandContext;
  const applying = changesCommand(ctx, store, "apply", [runId], (_title, lines) => {
    shown.push(...lines);
    if (lines.some((line) => line.includes(`held by pi-flow process ${hung.pid}`))) named();
  });
  await waiting; // shown while the other process still holds the lock
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
  const exited = once(hung, "exit");
  hung.stdin!.write("go\n");
  await exited;
  await applying;
  expect(shown.at(-1)).toContain(`Run ${runId}: applied to the working tree`);
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("child a\n");
}, 30_000);

test("a worktree child cancelled while its worktree waits for a lock another process holds stops waiting at once, leaving nothing behind", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const repo = await openRepository(root);
  const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
  const hung = await holder(repo.commonDir, join(root, "holder-done"));
  try {
    const controller = new AbortController();
    let waiting: () => void = () => undefined;
    const told = new Promise<void>((resolve) => (waiting = resolve));
    const evidence = { appendDiagnostic: () => waiting() };
    const runId = "ag_0mx1xga91_cancelled0";
    const making = isolationWorktree(startIsolation(repo, runId, home, { evidence, lockWait: { noticeMs: 50 } }), controller.signal).catch((caught: unknown) => caught);
    await told; // it waits for the lock (the default patience is 30 s)
    controller.abort(new Error("cancelled by the parent"));
    expect(((await making) as Error).message).toBe("cancelled by the parent");
    expect(existsSync(ownerFile(worktreesDir(home, root), runId))).toBe(false);
    expect(worktreeCount(root)).toBe(1);
  } finally {
    const exited = once(hung, "exit");
    hung.stdin!.write("go\n");
    await exited;
  }
}, 15_000);

test("Esc on an external_runs apply that waits for a lock another process holds stops the wait at once (AbortError), applying nothing", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const pi = await startPiSession({ cwd: root });
  try {
    const repo = await openRepository(root);
    const store = openRunStore({ home: pi.flowHome, cwd: pi.cwd, sessionId: pi.session.sessionId, registry: new RunRegistry() });
    const runId = await keptRun(store, root, { "a.txt": "child a\n" });
    const hung = await holder(repo.commonDir, join(repo.root, "holder-done"));
    try {
      const tool = pi.session.getToolDefinition("external_runs")!;
      const esc = new AbortController();
      const ctx = pi.session.extensionRunner.createToolContext("call_apply", esc.signal);
      let told!: () => void;
      const waiting = new Promise<void>((resolve) => (told = resolve));
      const applying = tool.execute("call_apply", { action: "apply", runIds: [runId] } as never, esc.signal, (() => told()) as never, ctx);
      const outcome = applying.then(
        (result) => ({ returned: (result as { structuredContent?: unknown }).structuredContent }),
        (error: unknown) => ({ threw: error }),
      );
      await waiting; // the apply said who holds the lock: it is waiting for it now
      esc.abort();
      const settled = await outcome;
      expect(settled).toEqual({ threw: expect.objectContaining({ name: "AbortError" }) });
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
      expect(readChangeRecord(runFiles(store.scope, runId))?.state).toBe("kept");
    } finally {
      const exited = once(hung, "exit");
      hung.stdin!.write("go\n");
      await exited;
    }
  } finally {
    await pi.dispose();
  }
}, 60_000);

test("a wait behind an earlier holder in this process stops at once on its signal (AbortError), and the next waiter still waits its turn", async () => {
  const repo = await openRepository(makeRepo());
  const events: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let holding!: () => void;
  const held = new Promise<void>((resolve) => (holding = resolve));
  const first = withRepositoryLock(repo.commonDir, async () => {
    holding();
    await gate;
    events.push("first done");
  });
  await held;
  const esc = new AbortController();
  const second = withRepositoryLock(repo.commonDir, async () => void events.push("second ran"), { signal: esc.signal }).catch((error: unknown) => {
    events.push(`second ${(error as Error).name}`);
  });
  const third = withRepositoryLock(repo.commonDir, async () => void events.push("third ran"));
  esc.abort();
  // The holder lets go only after everything the abort set off has run.
  setImmediate(release);
  await Promise.all([first, second, third]);
  expect(events).toEqual(["second AbortError", "first done", "third ran"]);
});
