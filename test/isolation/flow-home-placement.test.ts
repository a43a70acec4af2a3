// Where the flow home sits against the user's repository. At the top of the working tree, its run
// evidence and children's worktrees would be the user's files: in every child's base, kept in a
// child's changes, and written by an apply (a child rewriting another run's changes.json). That is
// refused before anything is made or written; a flow home around the repository works as usual.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { changeRuns } from "../../src/isolation/apply-runs.ts";
import { writeChangeRecord } from "../../src/isolation/change-record.ts";
import { isolationRepository, startIsolation } from "../../src/isolation/child-isolation.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { createIsolation, worktreesDir } from "../../src/isolation/worktree.ts";
import { openRunStore, RunRegistry, runFiles } from "../../src/runs/index.ts";
import { gitIn, makeRepo, worktreeCount, writeIn } from "../support/git-repo.ts";
import { keptRun } from "../support/kept-run.ts";

const refusal = expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining("is the top of the git working tree") });

test("a flow home at the top of the working tree refuses a worktree child before launch, and its base is never captured", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  await expect(isolationRepository("worktree", undefined, root, root)).rejects.toThrow(refusal);
  const repo = await isolationRepository("worktree", undefined, root, join(root, "elsewhere"));
  await expect(startIsolation(repo!, "ag_0mx1xga91_abcdefghij", root).base).rejects.toThrow(refusal);
});

test("a run kept with its flow home at the top of the working tree is not applied over pi-flow's own files: refused, nothing written", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const store = openRunStore({ home: root, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const victim = store.create({ kind: "agent", task: { description: "another run" }, background: false });
  victim.settle({ outcome: "succeeded", value: "done" });
  const forged = join(runFiles(store.scope, victim.runId).dir, "changes.json").slice(root.length + 1);
  // Kept by a pi-flow that did not refuse: the child wrote a.txt and another run's change record.
  const run = store.create({ kind: "agent", task: { description: "writes" }, background: false });
  const index = join(mkdtempSync(join(tmpdir(), "pi-flow-index-")), "index");
  const env = { ...process.env, GIT_INDEX_FILE: index };
  writeIn(root, { "a.txt": "child\n", [forged]: '{"state":"kept","root":"/elsewhere","files":1,"insertions":1,"deletions":0}\n' });
  execFileSync("git", ["read-tree", "HEAD"], { cwd: root, env });
  execFileSync("git", ["update-index", "--add", "a.txt", forged], { cwd: root, env });
  const tree = execFileSync("git", ["write-tree"], { cwd: root, env, encoding: "utf8" }).trim();
  gitIn(root, "checkout", "--", "a.txt");
  rmSync(join(root, forged));
  gitIn(root, "update-ref", `refs/pi-flow/${run.runId}`, gitIn(root, "commit-tree", tree, "-p", "HEAD", "-m", "kept"));
  await writeChangeRecord(runFiles(store.scope, run.runId), { state: "kept", root, files: 2, insertions: 2, deletions: 1 });
  run.settle({ outcome: "succeeded", value: "done", changes: { files: 2, insertions: 2, deletions: 1 } });

  await expect(changeRuns(store, "apply", [run.runId])).rejects.toThrow(refusal);
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
  expect(() => readFileSync(join(root, forged))).toThrow(/ENOENT/);
});

test("a flow home around the repository (the repository inside it) keeps and applies a child's changes, none of pi-flow's files among them", async () => {
  const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
  const root = join(home, "code", "project");
  mkdirSync(root, { recursive: true });
  gitIn(root, "init", "-q", "-b", "main");
  writeIn(root, { "a.txt": "a\n" });
  gitIn(root, "add", "-A");
  gitIn(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "initial");
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const runId = await keptRun(store, root, { "a.txt": "child\n" });
  expect(gitIn(root, "ls-tree", "-r", "--name-only", `refs/pi-flow/${runId}`)).toBe("a.txt");
  expect(await changeRuns(store, "apply", [runId])).toEqual([{ runId, status: "applied", files: ["a.txt"] }]);
  expect(gitIn(root, "status", "--porcelain")).toBe("M a.txt");
});

test("a flow home whose worktrees folder (or the project's in it) is a link refuses a worktree child before launch and before its worktree is made", async () => {
  // Crash cleanup reaches a worktree by the flow home's real path, and removes nothing through a
  // link on the way (a child may have put it there): one made through a link would be left forever.
  const root = makeRepo({ "a.txt": "a\n" });
  const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
  const elsewhere = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-bigdisk-")));
  symlinkSync(elsewhere, join(home, "worktrees"));
  const linked = expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining(`${join(home, "worktrees")} is a link`) });
  await expect(isolationRepository("worktree", undefined, root, home)).rejects.toThrow(linked);
  await expect(createIsolation(await openRepository(root), "ag_0mx1xga91_linkedhome", home)).rejects.toThrow(linked);
  expect(readdirSync(elsewhere)).toEqual([]);
  expect(worktreeCount(root)).toBe(1);

  rmSync(join(home, "worktrees"));
  mkdirSync(join(home, "worktrees"));
  symlinkSync(elsewhere, worktreesDir(home, root));
  await expect(isolationRepository("worktree", undefined, root, home)).rejects.toThrow(expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining(`${worktreesDir(home, root)} is a link`) }));
  expect(readdirSync(elsewhere)).toEqual([]);
});
