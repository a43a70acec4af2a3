// A child's worktree index is the child's to break: a git it ran killed mid-commit (a timeout, a
// cancel) leaves index.lock behind, and its bash can overwrite the index outright. Its changes are
// kept either way. Real git, a real worktree.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { openRepository } from "../../src/isolation/repository.ts";
import { copyIndex } from "../../src/isolation/snapshot.ts";
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

// A process the child left running can swap its index at any time: the copy is opened first and
// checked through that descriptor, so a FIFO is refused without waiting on a writer, a link is not
// followed, and the bytes and time copied are the file's own.
test("an index is copied through one descriptor: a FIFO refused without waiting, a child's link refused, a file copied with its time", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pi-flow-index-copy-"));
  const [fifo, file, link, copy] = ["fifo", "file", "link", "copy"].map((name) => join(dir, name)) as [string, string, string, string];
  execFileSync("mkfifo", [fifo]);
  await expect(copyIndex(fifo, copy)).rejects.toMatchObject({ name: "GitFileUnreadable", file: fifo });
  writeFileSync(file, "DIRC index bytes");
  utimesSync(file, 1_000, 1_000);
  symlinkSync(file, link);
  await expect(copyIndex(link, copy, { noLinks: true })).rejects.toMatchObject({ name: "GitFileUnreadable", file: link });
  await expect(copyIndex(join(dir, "absent"), copy)).resolves.toBe(false);
  await expect(copyIndex(link, copy)).resolves.toBe(true); // the user's index, followed as git follows it
  expect(readFileSync(copy, "utf8")).toBe("DIRC index bytes");
  expect(statSync(copy).mtimeMs).toBe(1_000_000);
});
