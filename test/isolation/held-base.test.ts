// A background worktree child's base waits with it for a slot: held on a ref until the child
// settles, so a git gc --prune=now meanwhile (the user's, a sibling child's) does not delete it.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { finishIsolation, isolationWorktree, startIsolation } from "../../src/isolation/child-isolation.ts";
import { cleanupIsolation } from "../../src/isolation/cleanup.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { openRunStore, RunRegistry, runFiles } from "../../src/runs/index.ts";
import { gitIn, makeRepo, writeIn } from "../support/git-repo.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
const storeOf = (root: string) => openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });

test("a git gc --prune=now while a worktree child waits for its slot leaves its base: the child gets its worktree from the tree the user saw, and the held ref goes when it settles", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  writeIn(root, { "a.txt": "the user's edit, not committed\n" });
  const store = storeOf(root);
  const run = store.create({ kind: "agent", task: { description: "waits" }, background: true });
  const pending = startIsolation(await openRepository(root), run.runId, home);
  await pending.base;
  gitIn(root, "gc", "-q", "--prune=now");
  const worktree = await isolationWorktree(pending);
  expect(readFileSync(join(worktree.path, "a.txt"), "utf8")).toBe("the user's edit, not committed\n");
  writeIn(worktree.path, { "b.txt": "b\n" });
  const stats = await finishIsolation(pending, runFiles(store.scope, run.runId), home, run);
  expect(stats).toEqual({ files: 1, insertions: 1, deletions: 0 });
  expect(gitIn(root, "for-each-ref", "refs/pi-flow-base")).toBe("");
});

test("a worktree child cancelled while it waits for its slot leaves no held base behind", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const store = storeOf(root);
  const run = store.create({ kind: "agent", task: { description: "cancelled" }, background: true });
  const pending = startIsolation(await openRepository(root), run.runId, home);
  await pending.base;
  expect(gitIn(root, "for-each-ref", "--format=%(refname)", "refs/pi-flow-base")).toBe(`refs/pi-flow-base/${run.runId}`);
  expect(await finishIsolation(pending, runFiles(store.scope, run.runId), home, run)).toBeUndefined();
  expect(gitIn(root, "for-each-ref", "refs/pi-flow-base")).toBe("");
});

test("crash cleanup drops a held base whose run is gone, and leaves one of another flow home", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const otherHome = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
  for (const [flowHome, runId] of [[home, "ag_0mx1xga91_gonegonego"], [otherHome, "ag_0mx1xga91_otherhome0"]] as const) {
    const pending = startIsolation(await openRepository(root), runId, flowHome); // a host that died before its child settled
    await pending.base;
  }
  mkdirSync(join(home, "worktrees"), { recursive: true });
  await cleanupIsolation(home, root);
  expect(gitIn(root, "for-each-ref", "--format=%(refname)", "refs/pi-flow-base")).toBe("refs/pi-flow-base/ag_0mx1xga91_otherhome0");
});
