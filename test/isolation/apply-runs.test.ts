// external_runs apply and discard over real runs: a run store with finished agent runs whose
// changes a real worktree kept, applied onto a real repository.
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, test } from "vitest";
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { changesCommand } from "../../src/commands/changes.ts";
import { changeRuns, formatChangeAnswers } from "../../src/isolation/apply-runs.ts";
import { readChangeRecord, writeChangeRecord } from "../../src/isolation/change-record.ts";
import { cleanupIsolation } from "../../src/isolation/cleanup.ts";
import { withRepositoryLock } from "../../src/isolation/repository-lock.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { finishIsolation, isolationWorktree, startIsolation } from "../../src/isolation/child-isolation.ts";
import { openRunStore, RunRegistry, runFiles } from "../../src/runs/index.ts";
import { processGlobal } from "../../runtime/process-global.ts";
import { gitIn, makeRepo, writeIn } from "../support/git-repo.ts";
import { keptRun } from "../support/kept-run.ts";
import { applyKilledWhileWriting } from "../support/killed-apply.ts";
import { useOwnUserGitConfig } from "../support/user-git-config.ts";

/** The user's own git config, where the filters these tests stand a slow disk or an offline LFS with are defined. */
const userConfig = useOwnUserGitConfig();

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));

const storeOf = (root: string, sessionId = "s") => openRunStore({ home, cwd: root, sessionId, registry: new RunRegistry() });

/** Resolves once `count` more calls have queued for the repository lock of `commonDir` (each sets the queue's tail). */
function lockWaiters(commonDir: string, count: number): Promise<void> {
  const queues = processGlobal("pi-flow.worktree-queues", () => new Map<string, Promise<unknown>>());
  return new Promise((resolve) => {
    let seen = 0;
    queues.set = (key, value) => {
      if (key === commonDir && ++seen === count) {
        delete (queues as { set?: unknown }).set;
        resolve();
      }
      return Map.prototype.set.call(queues, key, value) as typeof queues;
    };
  });
}

test("two applies of one run at once: one applies, the other says already applied, and the file is written once", async () => {
  const root = makeRepo({ "log.txt": "one\n" });
  const store = storeOf(root);
  const runId = await keptRun(store, root, { "log.txt": "one\ntwo\n" });
  const repo = await openRepository(root);
  // The test holds the repository lock until both applies wait for it, so both have looked at the run before either applies.
  let release!: () => void;
  const holding = withRepositoryLock(repo.commonDir, () => new Promise<void>((resolve) => (release = resolve)));
  const waiting = lockWaiters(repo.commonDir, 2);
  const first = changeRuns(store, "apply", [runId]);
  const second = changeRuns(store, "apply", [runId]);
  await waiting;
  release();
  await holding;
  const answers = [...(await first), ...(await second)];
  expect(answers.map((answer) => answer.status).sort()).toEqual(["already_applied", "applied"]);
  expect(readFileSync(join(root, "log.txt"), "utf8")).toBe("one\ntwo\n");
});

/**
 * Another process applies argv[3] from the run store (home argv[1], project argv[2], session "s"),
 * as `flow runs apply` would; the test kills it while git writes the working tree.
 */

test("an apply killed while writing the working tree: /flow apply names the files it may have touched; discard keeps the tree as it is", async () => {
  const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
  const store = storeOf(root);
  const runId = await keptRun(store, root, { "a.txt": "child a\n", "b.txt": "child b\n" });
  await applyKilledWhileWriting({ home, root, runId, attributes: "*.txt filter=slow\n", userConfig });
  const before = gitIn(root, "status", "--porcelain=v1");

  // /flow apply's summary says so before asking anything (a session with no UI only shows it).
  const shown: string[] = [];
  await changesCommand({ hasUI: false } as ExtensionCommandContext, store, "apply", [runId], (_title, lines) => void shown.push(...lines));
  expect(shown[0]).toBe(`${runId}: its previous apply did not finish; the working tree may hold some of its changes and not others: a.txt, b.txt`);
  // (Applying it again finishes it, or refuses naming a file changed since: interrupted-apply.test.ts.)
  expect(await changeRuns(store, "discard", [runId])).toEqual([{ runId, status: "discarded" }]);
  expect(gitIn(root, "status", "--porcelain=v1")).toBe(before); // the tree kept as it is
  expect(await changeRuns(store, "apply", [runId])).toEqual([{ runId, status: "nothing_to_apply" }]);
});

describe("a flow home inside the user's working tree (a dotfiles repository at ~)", () => {
  for (const ignored of [false, true]) {
    it(`a child's writes into it${ignored ? " (ignored, the child un-ignoring it)" : ""} are never kept nor applied into pi-flow's own files; its other changes are`, async () => {
      const root = makeRepo({ "a.txt": "a\n", ".gitignore": ignored ? "dot-pi/\n" : "" });
      const inner = join(root, "dot-pi", "flow");
      const store = openRunStore({ home: inner, cwd: root, sessionId: "s", registry: new RunRegistry() });
      const victim = join(runFiles(store.scope, "ag_0mx1xga91_abcdefghij").dir, "changes.json").slice(root.length + 1);
      const runId = await keptRun(store, root, { "a.txt": "child\n", ".gitignore": "", [victim]: '{"state":"kept"}\n', "dot-pi/flow/roles/evil.md": "planted\n" });
      expect(gitIn(root, "ls-tree", "-r", "--name-only", `refs/pi-flow/${runId}`)).toBe(".gitignore\na.txt");
      const answers = await changeRuns(store, "apply", [runId]);
      expect(answers).toEqual([{ runId, status: "applied", files: ignored ? [".gitignore", "a.txt"] : ["a.txt"] }]);
      expect(existsSync(join(root, victim))).toBe(false);
      expect(existsSync(join(inner, "roles"))).toBe(false);
    });
  }

  it("changes kept with files in it (by an older pi-flow, or another flow home) conflict, naming them, and write nothing", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const inner = join(root, "dot-pi", "flow");
    const store = openRunStore({ home: inner, cwd: root, sessionId: "s", registry: new RunRegistry() });
    const runId = await keptRun(store, root, { "a.txt": "child\n" });
    // The same change, plus a file in the flow home, as a commit on the run's base.
    const base = gitIn(root, "rev-parse", `refs/pi-flow/${runId}^1`);
    writeIn(root, { "dot-pi/flow/planted.json": "{}\n" });
    const index = join(mkdtempSync(join(tmpdir(), "pi-flow-index-")), "index");
    const env = { ...process.env, GIT_INDEX_FILE: index };
    execFileSync("git", ["read-tree", `refs/pi-flow/${runId}`], { cwd: root, env });
    execFileSync("git", ["update-index", "--add", "dot-pi/flow/planted.json"], { cwd: root, env });
    const tree = execFileSync("git", ["write-tree"], { cwd: root, env, encoding: "utf8" }).trim();
    rmSync(join(root, "dot-pi/flow/planted.json"));
    gitIn(root, "update-ref", `refs/pi-flow/${runId}`, gitIn(root, "commit-tree", tree, "-p", base, "-m", "kept"));
    expect(await changeRuns(store, "apply", [runId])).toEqual([{ runId, status: "conflict", files: ["dot-pi/flow/planted.json"], reason: "files in the flow home inside the working tree (pi-flow's own), which an apply never writes" }]);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
    expect(existsSync(join(inner, "planted.json"))).toBe(false);
  });
});

describe("a call that fails after earlier runs changed the working tree names them", () => {
  it("apply: a run whose write git refuses (the user's required filter fails, an LFS offline) names the run applied before it and its files", async () => {
    const root = makeRepo({ "a.txt": "a\n", "b.bin": "b\n" });
    const store = storeOf(root);
    const first = await keptRun(store, root, { "a.txt": "child a\n" });
    const second = await keptRun(store, root, { "b.bin": "child b\n", "\u001b]0;owned\u0007.txt": "x\n" });
    userConfig("filter.offline.clean", "cat");
    userConfig("filter.offline.smudge", "false");
    userConfig("filter.offline.required", "true");
    writeIn(root, { ".git/info/attributes": "*.bin filter=offline\n" });
    const failed = changeRuns(store, "apply", [first, second]);
    await expect(failed).rejects.toThrow(`(before it, ${first} was applied: Run ${first}: applied to the working tree (nothing staged): a.txt.)`);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("child a\n");
    // git removed the user's b.bin before failing to write it: the failed run is not applied over
    // that tree, and the message says how to put the file back as it was.
    await expect(failed).rejects.toThrow(`Run ${second}'s apply failed (git checkout-index failed:`);
    await expect(failed).rejects.toThrow("while writing the working tree, which may hold some of its changes and not others; it was writing or deleting: <U+001B>]0;owned<U+0007>.txt, b.bin.");
    await expect(failed).rejects.toThrow(expect.objectContaining({ message: expect.not.stringMatching(/[\u0000-\u0008\u000b-\u001f\u007f]/) })); // git's message named a file the child chose
    const restore = /`git restore --source=([0-9a-f]{40}) --worktree -- <file>`/.exec(await failed.then(() => "", (error: Error) => error.message))!;
    expect(existsSync(join(root, "b.bin"))).toBe(false);
    userConfig("--unset", "filter.offline.required");
    userConfig("filter.offline.smudge", "cat");
    gitIn(root, "restore", `--source=${restore[1]!}`, "--worktree", "--", "b.bin");
    expect(readFileSync(join(root, "b.bin"), "utf8")).toBe("b\n");
    // Every file it was writing is as before it or as it writes it: applied again, it finishes.
    expect(await changeRuns(store, "apply", [second])).toEqual([{ runId: second, status: "applied", files: ["\u001b]0;owned\u0007.txt", "b.bin"] }]);
    expect(readFileSync(join(root, "b.bin"), "utf8")).toBe("child b\n");
    expect(gitIn(root, "for-each-ref", "refs/pi-flow-before")).toBe(""); // no longer kept once applied
  });

  it("discard: a run whose repository folder became a file names the runs discarded before it", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const store = storeOf(root);
    const [first, second] = [await keptRun(store, root, { "a.txt": "one\n" }), await keptRun(store, root, { "a.txt": "two\n" })];
    const gone = makeRepo();
    const files = runFiles(store.scope, second);
    await writeChangeRecord(files, { ...readChangeRecord(files)!, root: join(gone, "README.md") });
    const failed = changeRuns(store, "discard", [first, second]);
    await expect(failed).rejects.toThrow(expect.objectContaining({ code: "run_unavailable", message: expect.stringContaining(`(before it, ${first} was discarded: Run ${first}: changes discarded.)`) }));
    expect(gitIn(root, "for-each-ref", "refs/pi-flow")).not.toContain(first);
  });
});

test("a run that wrote hundreds of files (an un-ignored node_modules) applies them all; its answer lists two hundred and its line fifty, each counting the rest, and its evidence all", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const store = storeOf(root);
  // Past both caps (200 listed, 50 named in the line), and no more: each file costs the keeping and the apply.
  const names = Array.from({ length: 260 }, (_, i) => `node_modules/pkg${String(i).padStart(4, "0")}/index.js`);
  const runId = await keptRun(store, root, Object.fromEntries(names.map((name, i) => [name, `module.exports = ${i};\n`])));
  const [answer] = await changeRuns(store, "apply", [runId]);
  expect(answer!.files).toEqual(names.slice(0, 200));
  expect(answer!.moreFiles).toBe(60);
  expect(readChangeRecord(runFiles(store.scope, runId))?.appliedFiles).toEqual(names);
  expect(readFileSync(join(root, "node_modules/pkg0259/index.js"), "utf8")).toBe("module.exports = 259;\n");
  const line = formatChangeAnswers([answer!], "apply");
  expect(line).toContain("node_modules/pkg0049/index.js and 210 more.");
  expect(line).not.toContain("pkg0050");
  expect(line.length).toBeLessThan(2000);
});

test("a git repository the child made in its worktree is left out of its kept changes, its diagnostics say so, and the rest applies", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const store = storeOf(root);
  const run = store.create({ kind: "agent", task: { description: "clones" }, background: false });
  const pending = startIsolation(await openRepository(root), run.runId, home);
  const worktree = await isolationWorktree(pending);
  const nested = join(worktree.path, "vendor", "lib");
  writeIn(nested, { "lib.js": "the child's clone\n" });
  gitIn(nested, "init", "-q");
  gitIn(nested, "add", "-A");
  gitIn(nested, "commit", "-q", "-m", "cloned");
  writeIn(worktree.path, { "a.txt": "uses lib\n" });
  const files = runFiles(store.scope, run.runId);
  const stats = await finishIsolation(pending, files, home, run);
  run.settle({ outcome: "succeeded", value: "done", changes: stats! });
  expect(gitIn(root, "ls-tree", "-r", "--name-only", `refs/pi-flow/${run.runId}`)).toBe("a.txt");
  expect(readFileSync(files.diagnostics, "utf8")).toContain("the child's changes to git repositories inside its tree (folders with their own .git, made by git init or a clone, or removed) are not kept, at vendor/lib: ");
  expect(await changeRuns(store, "apply", [run.runId])).toEqual([{ runId: run.runId, status: "applied", files: ["a.txt"] }]);
  expect(existsSync(join(root, "vendor"))).toBe(false); // no empty folder standing for the child's files
});

test("a folder git-initialised without a commit (cargo new, a scaffolder), the user's or the child's, is left out and the rest of the changes kept and applied", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  writeIn(root, { "scratch/notes.txt": "the user's own\n" });
  gitIn(join(root, "scratch"), "init", "-q");
  const store = storeOf(root);
  const run = store.create({ kind: "agent", task: { description: "scaffolds" }, background: false });
  const pending = startIsolation(await openRepository(root), run.runId, home);
  const worktree = await isolationWorktree(pending);
  writeIn(worktree.path, { "a.txt": "uses the crate\n", "crate/src/main.rs": "fn main() {}\n" });
  gitIn(join(worktree.path, "crate"), "init", "-q");
  const files = runFiles(store.scope, run.runId);
  const stats = await finishIsolation(pending, files, home, run);
  run.settle({ outcome: "succeeded", value: "done", changes: stats! });
  expect(gitIn(root, "ls-tree", "-r", "--name-only", `refs/pi-flow/${run.runId}`)).toBe("a.txt");
  expect(readFileSync(files.diagnostics, "utf8")).toContain("are not kept, at crate: ");
  expect(await changeRuns(store, "apply", [run.runId])).toEqual([{ runId: run.runId, status: "applied", files: ["a.txt"] }]);
  expect(readFileSync(join(root, "scratch/notes.txt"), "utf8")).toBe("the user's own\n");
});

test("files a child wrote inside a submodule (which its worktree does not check out) are named in its diagnostics, not silently dropped; the rest applies", async () => {
  const library = makeRepo({ "lib.js": "the library\n" });
  const root = makeRepo({ "a.txt": "a\n" });
  gitIn(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", library, "vendor/lib");
  gitIn(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a submodule");
  const store = storeOf(root);
  const run = store.create({ kind: "agent", task: { description: "edits the library" }, background: false });
  const pending = startIsolation(await openRepository(root), run.runId, home);
  const worktree = await isolationWorktree(pending);
  writeIn(worktree.path, { "vendor/lib/lib.js": "the child's fix\n", "a.txt": "uses the fix\n" });
  const files = runFiles(store.scope, run.runId);
  const stats = await finishIsolation(pending, files, home, run);
  run.settle({ outcome: "succeeded", value: "done", changes: stats! });
  expect(readFileSync(files.diagnostics, "utf8")).toContain("the child's files inside submodules are not kept, at vendor/lib: ");
  expect(await changeRuns(store, "apply", [run.runId])).toEqual([{ runId: run.runId, status: "applied", files: ["a.txt"] }]);
  expect(readFileSync(join(root, "vendor/lib/lib.js"), "utf8")).toBe("the library\n");
});

test("an apply that finds a file changed on disk after it marked the run writes nothing and leaves the run to apply again", async () => {
  const lines = "1\n2\n3\n4\n5\n6\n7\n8\n";
  const root = makeRepo({ "c.txt": lines });
  const store = storeOf(root);
  const runId = await keptRun(store, root, { "c.txt": `one\n${lines.slice(2)}` });
  // The user's own clean filter reads differently each time it runs (it counts): to the apply, c.txt
  // changed between the tree it merged and the check just before writing, as an editor's save would.
  const counter = join(mkdtempSync(join(tmpdir(), "pi-flow-counter-")), "n");
  writeFileSync(counter, "0\n");
  userConfig("filter.counting.clean", `cat; n=$(cat ${counter}); echo $n; echo $((n+1)) > ${counter}`);
  writeIn(root, { ".git/info/attributes": "c.txt filter=counting\n" });
  expect(await changeRuns(store, "apply", [runId])).toEqual([{ runId, status: "conflict", files: ["c.txt"] }]);
  expect(readFileSync(join(root, "c.txt"), "utf8")).toBe(lines);
  expect(readChangeRecord(runFiles(store.scope, runId))?.state).toBe("kept");
  expect(gitIn(root, "for-each-ref", "refs/pi-flow-before")).toBe("");
  writeIn(root, { ".git/info/attributes": "" });
  expect(await changeRuns(store, "apply", [runId])).toEqual([{ runId, status: "applied", files: ["c.txt"] }]);
});

test("a run pruned by retention after its apply failed half way has both its refs dropped by crash cleanup, and another flow home leaves them alone", async () => {
  const root = makeRepo({ "b.bin": "b\n" });
  const store = storeOf(root);
  const runId = await keptRun(store, root, { "b.bin": "child b\n" });
  userConfig("filter.offline.clean", "cat");
  userConfig("filter.offline.smudge", "false");
  userConfig("filter.offline.required", "true");
  writeIn(root, { ".git/info/attributes": "*.bin filter=offline\n" });
  await expect(changeRuns(store, "apply", [runId])).rejects.toThrow("apply failed");
  const runRefs = () => gitIn(root, "for-each-ref", "--format=%(refname)", "refs/pi-flow", "refs/pi-flow-before");
  expect(runRefs()).toBe(`refs/pi-flow-before/${runId}\nrefs/pi-flow/${runId}`);
  rmSync(runFiles(store.scope, runId).dir, { recursive: true }); // pruned by retention
  const other = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
  writeIn(other, { "worktrees/.keep": "" });
  expect(await cleanupIsolation(other, root)).toEqual({ removedWorktrees: [], droppedRefs: [] });
  expect(await cleanupIsolation(home, root)).toEqual({ removedWorktrees: [], droppedRefs: [runId] });
  expect(runRefs()).toBe("");
});
