// An apply killed between two files (a real `flow runs apply` process, SIGKILLed while git writes
// the second), then applied again: nothing of the user's is lost, and the second apply finishes or
// says what to do. Real git, real run store, real child process.
import { once } from "node:events";
import { mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { changeRuns } from "../../src/isolation/apply-runs.ts";
import { readChangeRecord } from "../../src/isolation/change-record.ts";
import { openRunStore, RunRegistry, runFiles, type RunStore } from "../../src/runs/index.ts";
import { gitIn, makeRepo, writeIn } from "../support/git-repo.ts";
import { keptRun } from "../support/kept-run.ts";
import { applyKilledWhileWriting } from "../support/killed-apply.ts";
import { useOwnUserGitConfig } from "../support/user-git-config.ts";

/** The user's own git config, where the filters these tests stand a slow disk or an offline LFS with are defined. */
const userConfig = useOwnUserGitConfig();

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));

/** Another process applies argv[3] from the run store (home argv[1], project argv[2], session "s"), as `flow runs apply` would. */

/** Applies `runId` in another process and SIGKILLs it once git begins writing b.txt (a.txt, before it, is written). */
const applyKilledBetweenFiles = (root: string, runId: string) => applyKilledWhileWriting({ home, root, runId, attributes: "b.txt filter=slow\n", userConfig });

/** A repository where the user edited the first line of a.txt and b.txt, and a run whose child edited their last lines. */
async function userAndChildEdits(): Promise<{ root: string; store: RunStore; runId: string }> {
  const root = makeRepo({ "a.txt": "a1\na2\na3\n", "b.txt": "b1\nb2\nb3\n" });
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const runId = await keptRun(store, root, { "a.txt": "a1\na2\nchild a3\n", "b.txt": "b1\nb2\nchild b3\n" });
  writeIn(root, { "a.txt": "user a1\na2\na3\n", "b.txt": "user b1\nb2\nb3\n" });
  return { root, store, runId };
}

test("an apply killed between two files, applied again: it finishes, with the user's edits and the child's in both files", async () => {
  const { root, store, runId } = await userAndChildEdits();
  await applyKilledBetweenFiles(root, runId);
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("user a1\na2\nchild a3\n"); // written before the kill
  expect(readChangeRecord(runFiles(store.scope, runId))?.state).toBe("applying");

  expect(await changeRuns(store, "apply", [runId])).toEqual([{ runId, status: "applied", files: ["a.txt", "b.txt"] }]);
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("user a1\na2\nchild a3\n");
  expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("user b1\nb2\nchild b3\n");
  expect(gitIn(root, "for-each-ref", "refs/pi-flow-before", "refs/pi-flow")).toBe("");
  expect(gitIn(root, "diff", "--cached", "--name-only")).toBe(""); // nothing staged
});

test("an apply killed between two files, then a file it touched edited by the user: the next apply refuses, naming it and how to put the rest back, and changes nothing", async () => {
  const { root, store, runId } = await userAndChildEdits();
  await applyKilledBetweenFiles(root, runId);
  writeIn(root, { "a.txt": "the user's edit after the crash\n" });
  const status = gitIn(root, "status", "--porcelain=v1");
  const refused = changeRuns(store, "apply", [runId]);
  await expect(refused).rejects.toThrow(expect.objectContaining({ code: "run_unavailable", message: expect.stringContaining("previous apply was interrupted") }));
  await expect(refused).rejects.toThrow(/a\.txt changed since/);
  await expect(refused).rejects.toThrow(/`git restore --source=[0-9a-f]{40} --worktree -- <file>`/);
  expect(gitIn(root, "status", "--porcelain=v1")).toBe(status);
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("the user's edit after the crash\n");
  // As the message says: the file as it was before the apply, and the run applied again.
  writeIn(root, { "a.txt": "user a1\na2\na3\n" });
  expect(await changeRuns(store, "apply", [runId])).toEqual([{ runId, status: "applied", files: ["a.txt", "b.txt"] }]);
  expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("user b1\nb2\nchild b3\n");
});
