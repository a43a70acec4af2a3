// A child's worktree index is the child's to break: a git its bash ran, killed mid-commit by a
// timeout or a cancel, leaves index.lock behind, and its bash can overwrite the index with anything
// (a link to /dev/zero). Its changes are kept through a private index instead: a copy of its own
// (git's stat cache, and the files it added despite .gitignore), or the base's when it left none git
// can read.
import { lstat, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git, gitPlace, runGit, type GitOptions, type PinnedWorktree } from "./git.ts";
import { copyIndex } from "./snapshot.ts";

/** An index larger than this (a child's bash can make one of any size) is not copied: the base's is read instead. */
const COPIED_MAX_BYTES = 1024 ** 3;

/** Runs `use` in the child's worktree with a private index, removed after. */
export async function withPrivateIndex<T>(worktree: PinnedWorktree, base: string, use: (place: GitOptions) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "pi-flow-index-"));
  try {
    const index = join(dir, "index");
    const place: GitOptions = { ...gitPlace(worktree), env: { GIT_INDEX_FILE: index } };
    if (!(await copiedReadable(join(worktree.gitDir, "index"), index, place, base))) {
      await rm(index, { force: true });
      await git(["read-tree", base], place);
    }
    return await use(place);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Whether the child's index (a plain file, never through a link) was copied to `to` and git can read the copy. */
async function copiedReadable(from: string, to: string, place: GitOptions, base: string): Promise<boolean> {
  const info = await lstat(from).catch(() => null);
  if (!info?.isFile() || info.size > COPIED_MAX_BYTES) return false;
  // With its own time: a copy stamped now would hide the child's same-size edit made in the second its index was written.
  if (!(await copyIndex(from, to).then(() => true, () => false))) return false;
  // 0: the same as the base, 1: differs; anything else is git failing to read it.
  const read = await runGit(["diff-index", "--cached", "--quiet", base], place);
  return read.code === 0 || read.code === 1;
}
