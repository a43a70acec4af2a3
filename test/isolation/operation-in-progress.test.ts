// Apply while git is part way through a merge or a rebase: refused, naming it, nothing written (a
// rebase --abort resets the tree hard and would take the applied changes with it). A worktree child
// started then works from the tree as the user sees it, conflict markers included.
import { mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { changesCommand } from "../../src/commands/changes.ts";
import { changeRuns } from "../../src/isolation/apply-runs.ts";
import { openRunStore, RunRegistry } from "../../src/runs/index.ts";
import { gitIn, makeRepo, writeIn } from "../support/git-repo.ts";
import { keptRun } from "../support/kept-run.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));

/** A repository whose branches main and other both changed a.txt: merging or rebasing them stops on a conflict. */
function divergedRepo(): string {
  const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
  gitIn(root, "checkout", "-q", "-b", "other");
  writeIn(root, { "a.txt": "other\n" });
  gitIn(root, "commit", "-qam", "other");
  gitIn(root, "checkout", "-q", "main");
  writeIn(root, { "a.txt": "main\n" });
  gitIn(root, "commit", "-qam", "main");
  return root;
}

const stopsOnConflict = (root: string, ...args: string[]) => expect(() => gitIn(root, ...args)).toThrow();

test("apply during a merge or a rebase is refused naming it, writes nothing, and applies once it is over", async () => {
  const root = divergedRepo();
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const runId = await keptRun(store, root, { "b.txt": "child\n" });

  stopsOnConflict(root, "merge", "other");
  await expect(changeRuns(store, "apply", [runId])).rejects.toThrow(
    expect.objectContaining({ code: "request_invalid", message: expect.stringContaining("is in the middle of a merge (.git/MERGE_HEAD): what git does next rewrites the working tree. Finish it (commit it, or git merge --abort), then apply again. Nothing was applied.") }),
  );
  // /flow apply says so before asking the person to confirm a merge that cannot happen.
  const asked: string[] = [];
  const ctx = { hasUI: true, ui: { confirm: async (title: string) => (asked.push(title), true) } } as unknown as ExtensionCommandContext;
  await expect(changesCommand(ctx, store, "apply", [runId], () => undefined)).rejects.toThrow(expect.objectContaining({ code: "request_invalid", message: expect.stringContaining("in the middle of a merge") }));
  expect(asked).toEqual([]);
  gitIn(root, "merge", "--abort");

  stopsOnConflict(root, "rebase", "other");
  await expect(changeRuns(store, "apply", [runId])).rejects.toThrow(expect.objectContaining({ code: "request_invalid", message: expect.stringContaining("in the middle of a rebase (.git/rebase-merge)") }));
  expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("b\n");
  gitIn(root, "rebase", "--abort");

  expect(await changeRuns(store, "apply", [runId])).toEqual([{ runId, status: "applied", files: ["b.txt"] }]);
  expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("child\n");
});

test("apply while a git stash pop left conflicts in the index (no merge under way) is refused naming the files, writes nothing, and applies once they are resolved", async () => {
  const root = makeRepo({ "a.txt": "1\n2\n3\n4\n5\n6\n7\n" });
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const runId = await keptRun(store, root, { "a.txt": "1\n2\n3\n4\n5\n6\nSEVEN\n" });
  writeIn(root, { "a.txt": "ONE, stashed\n2\n3\n4\n5\n6\n7\n" });
  gitIn(root, "stash");
  writeIn(root, { "a.txt": "ONE, committed\n2\n3\n4\n5\n6\n7\n" });
  gitIn(root, "commit", "-qam", "one");
  stopsOnConflict(root, "stash", "pop");
  const marked = readFileSync(join(root, "a.txt"), "utf8");
  await expect(changeRuns(store, "apply", [runId])).rejects.toThrow(
    expect.objectContaining({ code: "request_invalid", message: expect.stringContaining("holds unresolved conflicts, in a.txt (left by a git stash pop") }),
  );
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe(marked); // nothing written
  // The user takes their stash's side: git rewrites the file from the index. Then the apply lands.
  gitIn(root, "checkout", "--theirs", "a.txt");
  gitIn(root, "add", "a.txt");
  expect(await changeRuns(store, "apply", [runId])).toEqual([{ runId, status: "applied", files: ["a.txt"] }]);
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("ONE, stashed\n2\n3\n4\n5\n6\nSEVEN\n");
});

test("a worktree child started during a merge starts from the tree the user sees, conflict markers included", async () => {
  const root = divergedRepo();
  stopsOnConflict(root, "merge", "other");
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const runId = await keptRun(store, root, { "b.txt": "child\n" });
  expect(gitIn(root, "show", `refs/pi-flow/${runId}^1:a.txt`)).toBe(readFileSync(join(root, "a.txt"), "utf8").trim());
  expect(readFileSync(join(root, "a.txt"), "utf8")).toContain("<<<<<<< HEAD");
  expect(gitIn(root, "status", "--porcelain")).toBe("UU a.txt"); // the user's merge as it was
});
