// A child's worktree index is the child's to break: a git it ran killed mid-commit (a timeout, a
// cancel) leaves index.lock behind, and its bash can overwrite the index outright. Its changes are
// kept either way. Real git, a real worktree.
import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { openRepository } from "../../src/isolation/repository.ts";
import { createIsolation, settleIsolation } from "../../src/isolation/worktree.ts";
import { gitIn, makeRepo, writeIn, NO_STDIN } from "../support/git-repo.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));

/** A worktree child whose bash runs `command`, settled: the files its kept changes hold. */
async function keptAfter(runId: string, command: string): Promise<string> {
  const root = makeRepo({ "a.txt": "a\n", "ignored/base.txt": "tracked though ignored\n" });
  writeIn(root, { ".gitignore": "ignored/\n" });
  gitIn(root, "add", ".gitignore");
  gitIn(root, "commit", "-q", "-m", "ignore");
  const isolation = await createIsolation(await openRepository(root), runId, home);
  execFileSync("bash", ["-c", command], { cwd: isolation.path, stdio: NO_STDIN });
  expect(await settleIsolation(isolation, home)).not.toBeNull();
  return gitIn(root, "ls-tree", "-r", "--name-only", `refs/pi-flow/${runId}`);
}

test("a child whose git was killed mid-commit, leaving its index locked, has its changes kept", async () => {
  const files = await keptAfter("r-index0001", 'echo child > a.txt && echo new > n.txt && touch "$(git rev-parse --git-dir)/index.lock"');
  expect(files).toBe(".gitignore\na.txt\nignored/base.txt\nn.txt");
});

test("a child that overwrote its index (garbage, a link to a device) has its changes kept, and what it added despite .gitignore too when its index can be read", async () => {
  expect(await keptAfter("r-index0002", 'echo new > n.txt && echo garbage > "$(git rev-parse --git-dir)/index"')).toBe(".gitignore\na.txt\nignored/base.txt\nn.txt");
  expect(await keptAfter("r-index0003", 'echo new > n.txt && ln -sf /dev/zero "$(git rev-parse --git-dir)/index"')).toBe(".gitignore\na.txt\nignored/base.txt\nn.txt");
  expect(await keptAfter("r-index0004", "echo forced > ignored/forced.txt && git add -f ignored/forced.txt")).toBe(".gitignore\na.txt\nignored/base.txt\nignored/forced.txt");
});
