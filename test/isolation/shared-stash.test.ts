// Every worktree shares the repository's one stash (refs/stash): a child's git stash pop, drop or
// push in its worktree reaches the user's stash list. Real git, a real worktree child's settle.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { finishIsolation, isolationWorktree, startIsolation } from "../../src/isolation/child-isolation.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { openRunStore, RunRegistry, runFiles } from "../../src/runs/index.ts";
import { gitIn, makeRepo, writeIn, NO_STDIN } from "../support/git-repo.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));

/** A shell command in `cwd`, as a child's bash runs it. */
const bash = (cwd: string, command: string): string =>
  execFileSync("bash", ["-c", command], { cwd, encoding: "utf8", stdio: NO_STDIN, env: { ...process.env, GIT_AUTHOR_NAME: "c", GIT_AUTHOR_EMAIL: "c@c", GIT_COMMITTER_NAME: "c", GIT_COMMITTER_EMAIL: "c@c" } });

/** A worktree child whose bash runs `command`, settled; its diagnostics. */
async function childRuns(root: string, command: string): Promise<string> {
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "stashes" }, background: false });
  const pending = startIsolation(await openRepository(root), run.runId, home);
  const worktree = await isolationWorktree(pending);
  bash(worktree.path, command);
  const files = runFiles(store.scope, run.runId);
  const stats = await finishIsolation(pending, files, home, run);
  run.settle({ outcome: "succeeded", value: "done", ...(stats ? { changes: stats } : {}) });
  return existsSync(files.diagnostics) ? readFileSync(files.diagnostics, "utf8") : "";
}

test("a child's git stash; …; git stash pop with nothing of its own to stash leaves the user's stash entries on their list, in order, and says so", async () => {
  const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
  writeIn(root, { "b.txt": "older work\n" });
  gitIn(root, "stash", "push", "-m", "older");
  writeIn(root, { "a.txt": "the user's stashed work\n" });
  gitIn(root, "stash", "push", "-m", "newest");
  const before = gitIn(root, "stash", "list", "--format=%H %gs");
  // An agent checking the tests without its change: git stash (nothing to save), then pop; what it
  // popped it takes for a stray edit and discards, and does it again.
  const diagnostics = await childRuns(root, "git stash; git stash pop; git checkout -- .; git stash; git stash pop; git checkout -- .");
  expect(gitIn(root, "stash", "list", "--format=%H %gs")).toBe(before);
  expect(diagnostics).toContain("2 of the repository's stash entries left the stash list while this child ran");
  gitIn(root, "stash", "pop");
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("the user's stashed work\n");
});

test("a stash entry the child made and never popped is taken off the user's list, so their git stash pop does not apply the child's changes", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  writeIn(root, { "a.txt": "the user's stashed work\n" });
  gitIn(root, "stash", "push", "-m", "mine");
  const before = gitIn(root, "stash", "list", "--format=%H %gs");
  const diagnostics = await childRuns(root, "echo 'the child, stashed away' > a.txt && git stash push -m child");
  expect(gitIn(root, "stash", "list", "--format=%H %gs")).toBe(before);
  expect(diagnostics).toContain("the child's own git stash entries, made in its worktree, are taken off the shared stash list");
  gitIn(root, "stash", "pop");
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("the user's stashed work\n");
});

test("a child that leaves the stash alone leaves it as it was, and its run says nothing of it", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  writeIn(root, { "a.txt": "the user's stashed work\n" });
  gitIn(root, "stash", "push", "-m", "mine");
  const before = gitIn(root, "stash", "list", "--format=%H %gs");
  const diagnostics = await childRuns(root, "echo child > a.txt; git stash list");
  expect(gitIn(root, "stash", "list", "--format=%H %gs")).toBe(before);
  expect(diagnostics).not.toContain("stash_repaired");
});

test("a sibling started from the same tree keeps its own stash entry while it runs: the first child's settle does not take it off the list", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const [first, second] = [0, 1].map(() => store.create({ kind: "agent", task: { description: "stashes" }, background: false }));
  const repo = await openRepository(root);
  const pendings = [startIsolation(repo, first!.runId, home), startIsolation(repo, second!.runId, home)];
  const [, sibling] = await Promise.all(pendings.map((pending) => isolationWorktree(pending)));
  expect(await pendings[0]!.base).toBe(await pendings[1]!.base); // one tree, one base commit
  bash(sibling!.path, "echo 'the sibling, stashed for a moment' > a.txt && git stash push -q -m sibling");
  await finishIsolation(pendings[0]!, runFiles(store.scope, first!.runId), home, first!);
  bash(sibling!.path, "git stash pop -q");
  expect(readFileSync(join(sibling!.path, "a.txt"), "utf8")).toBe("the sibling, stashed for a moment\n");
  await finishIsolation(pendings[1]!, runFiles(store.scope, second!.runId), home, second!);
  expect(gitIn(root, "stash", "list")).toBe("");
});

test("an entry the user pops in their own checkout while a child runs stays popped: the child's settle does not put it back on their list", async () => {
  const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
  writeIn(root, { "a.txt": "the user's stashed work\n", "new.txt": "an untracked file of theirs\n" });
  gitIn(root, "stash", "push", "-u", "-m", "mine");
  writeIn(root, { "b.txt": "older work\n" });
  gitIn(root, "stash", "push", "-m", "older");
  const diagnostics = await childRuns(root, `echo child > b.txt; git -C ${JSON.stringify(root)} stash pop -q stash@{1}`);
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("the user's stashed work\n");
  expect(gitIn(root, "stash", "list", "--format=%gs")).toBe("On main: older");
  expect(diagnostics).not.toContain("stash_repaired");
});

test("a stash entry the child made after checking out the user's branch (on their commit, or on one of its own there) is taken off their list too", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  gitIn(root, "branch", "feature");
  gitIn(root, "commit", "-q", "--allow-empty", "-m", "main moves on"); // the user's checkout is not on feature's tip
  writeIn(root, { "a.txt": "the user's stashed work\n" });
  gitIn(root, "stash", "push", "-m", "mine");
  const before = gitIn(root, "stash", "list", "--format=%H %gs");
  const diagnostics = await childRuns(
    root,
    "git checkout -q feature && echo on-their-tip > a.txt && git stash push -m first && echo committed > a.txt && git commit -qam child && echo wip > a.txt && git stash push -m second",
  );
  expect(gitIn(root, "stash", "list", "--format=%H %gs")).toBe(before);
  expect(diagnostics).toMatch(/taken off the shared stash list.*"On feature: second".*"On feature: first"/);
  gitIn(root, "stash", "pop");
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("the user's stashed work\n");
});
