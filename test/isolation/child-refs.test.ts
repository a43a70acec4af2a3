// Every worktree shares the repository's branches and tags: those a child makes on its commits stay
// after its worktree is gone, and its run names them. Real git, a real worktree child's settle.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { finishIsolation, isolationWorktree, startIsolation } from "../../src/isolation/child-isolation.ts";
import { restoreMovedRefs } from "../../src/isolation/moved-refs.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { createIsolation, settleIsolation } from "../../src/isolation/worktree.ts";
import { openRunStore, RunRegistry, runFiles } from "../../src/runs/index.ts";
import { gitIn, makeRepo, NO_STDIN } from "../support/git-repo.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));

/** A worktree child whose bash runs `command`, settled; its diagnostics. */
async function childRuns(root: string, command: string): Promise<string> {
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "branches" }, background: false });
  const pending = startIsolation(await openRepository(root), run.runId, home);
  const worktree = await isolationWorktree(pending);
  execFileSync("bash", ["-c", command], { cwd: worktree.path, stdio: NO_STDIN, env: { ...process.env, GIT_AUTHOR_NAME: "c", GIT_AUTHOR_EMAIL: "c@c", GIT_COMMITTER_NAME: "c", GIT_COMMITTER_EMAIL: "c@c" } });
  const files = runFiles(store.scope, run.runId);
  const stats = await finishIsolation(pending, files, home, run);
  run.settle({ outcome: "succeeded", value: "done", ...(stats ? { changes: stats } : {}) });
  return existsSync(files.diagnostics) ? readFileSync(files.diagnostics, "utf8") : "";
}

test("a branch and a tag a child made on its commits are named in its run's diagnostics; the user's own branches are not", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  gitIn(root, "branch", "users-own");
  const diagnostics = await childRuns(root, "git checkout -q -b fix && echo fixed > a.txt && git commit -qam fix && git tag -a v2 -m v2");
  expect(gitIn(root, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags")).toBe("refs/heads/fix\nrefs/heads/main\nrefs/heads/users-own\nrefs/tags/v2");
  expect(diagnostics).toContain("[child_refs_left]: branches or tags were made on this child's commits in its worktree, and stay in the repository");
  expect(diagnostics).toContain(": refs/heads/fix, refs/tags/v2. ");
  expect(diagnostics).not.toContain("users-own");
});

test("a child that commits on its detached HEAD and makes no ref is not named", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const diagnostics = await childRuns(root, "echo fixed > a.txt && git commit -qam fix");
  expect(diagnostics).not.toContain("child_refs_left");
});

test("a child that commits on one of the user's branches, or moves their checked-out one with git update-ref, has them put back, its tips kept on refs it names", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  gitIn(root, "branch", "feature");
  const [main, feature] = [gitIn(root, "rev-parse", "main"), gitIn(root, "rev-parse", "feature")];
  const diagnostics = await childRuns(
    root,
    "git checkout -q feature && echo child > a.txt && git commit -qam 'on feature' && git checkout -q --detach && echo more > a.txt && git commit -qam 'on main' && git update-ref refs/heads/main HEAD",
  );
  expect(gitIn(root, "rev-parse", "main", "feature")).toBe(`${main}\n${feature}`);
  expect(gitIn(root, "status", "--porcelain")).toBe(""); // the user's checkout matches its branch again
  const kept = gitIn(root, "for-each-ref", "--format=%(refname) %(subject)", "refs/pi-flow-moved");
  expect(kept).toMatch(/^refs\/pi-flow-moved\/ag_\w+\/heads\/feature on feature\nrefs\/pi-flow-moved\/ag_\w+\/heads\/main on main$/);
  expect(diagnostics).toContain("[child_moved_refs]: this child moved branches or tags of yours onto commits it made in its worktree");
  expect(diagnostics).toContain(`refs/heads/feature (put back on ${feature.slice(0, 12)}; the child's tip is kept on refs/pi-flow-moved/`);
});

test("the user's own commit on their branch while a child runs is neither named nor put back", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const diagnostics = await childRuns(root, `echo child > a.txt && git commit -qam child && git -C ${JSON.stringify(root)} commit -q --allow-empty -m 'the user commits'`);
  expect(gitIn(root, "log", "-1", "--format=%s", "main")).toBe("the user commits");
  expect(diagnostics).not.toContain("child_moved_refs");
  expect(gitIn(root, "for-each-ref", "refs/pi-flow-moved")).toBe("");
});

test("a line the child wrote into its worktree's HEAD reflog naming no commit does not stop its move of the user's branch from being put back", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  gitIn(root, "branch", "feature");
  const feature = gitIn(root, "rev-parse", "feature");
  const diagnostics = await childRuns(root, `git checkout -q feature && echo child > a.txt && git commit -qam child && echo "${"1".repeat(40)} ${"2".repeat(40)} x <x> 0 +0000	made up" >> "$(git rev-parse --absolute-git-dir)/logs/HEAD"`);
  expect(gitIn(root, "rev-parse", "feature")).toBe(feature);
  expect(diagnostics).toContain(`refs/heads/feature (put back on ${feature.slice(0, 12)}`);
});

test("a child that grows its worktree's HEAD reflog past what is read (junk before its real lines) still has its move of the user's branch put back", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  gitIn(root, "branch", "feature");
  const feature = gitIn(root, "rev-parse", "feature");
  // 12 MiB of lines naming no commit, written before the checkout and commit append their own.
  const junk = `head -c 12582912 /dev/zero | tr '\\0' 'x' | fold -w 200 > "$(git rev-parse --absolute-git-dir)/logs/HEAD"`;
  const diagnostics = await childRuns(root, `${junk} && git checkout -q feature && echo child > a.txt && git commit -qam child`);
  expect(gitIn(root, "rev-parse", "feature")).toBe(feature);
  expect(diagnostics).toContain(`refs/heads/feature (put back on ${feature.slice(0, 12)}`);
});

test("a branch deleted while a child ran (its reflog goes with it) is named with the commit it held, so it can be brought back; nothing is put back", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  gitIn(root, "checkout", "-q", "-b", "feature");
  gitIn(root, "commit", "-q", "--allow-empty", "-m", "only on feature");
  gitIn(root, "checkout", "-q", "main");
  const feature = gitIn(root, "rev-parse", "feature");
  const diagnostics = await childRuns(root, "git branch -D feature");
  expect(gitIn(root, "branch", "--list", "feature")).toBe("");
  expect(diagnostics).toContain(`[refs_deleted]: branches or tags were deleted while this child ran, by it or another process`);
  expect(diagnostics).toContain(`refs/heads/feature (held ${feature})`);
});

test("a child's HEAD reflog made a FIFO after the settle's look at the git folder (by a process it left running) is read without waiting on it, and git refuses naming it", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const child = await createIsolation(await openRepository(root), "r-reflogfifo", home);
  const main = gitIn(root, "rev-parse", "main");
  execFileSync("bash", ["-c", "echo child > a.txt && git commit -qam child && git update-ref refs/heads/main HEAD"], { cwd: child.path, env: { ...process.env, GIT_AUTHOR_NAME: "c", GIT_AUTHOR_EMAIL: "c@c", GIT_COMMITTER_NAME: "c", GIT_COMMITTER_EMAIL: "c@c" } });
  const reflog = join(child.gitDir, "logs", "HEAD");
  rmSync(reflog);
  execFileSync("mkfifo", [reflog]);
  // Read without waiting on it; the git that reads the worktree's HEAD after it refuses, naming it.
  await expect(restoreMovedRefs(root, child.runId, child.refs, child.base, child)).rejects.toMatchObject({ name: "GitFileUnreadable", file: reflog });
  rmSync(reflog);
  expect(await restoreMovedRefs(root, child.runId, child.refs, child.base, child)).toMatchObject([{ ref: "refs/heads/main", restored: true }]);
  expect(gitIn(root, "rev-parse", "main")).toBe(main);
  await settleIsolation(child, home);
}, 20_000);
