// A child's worktree index is the child's to break: a git its bash ran, killed mid-commit by a
// timeout or a cancel, leaves index.lock behind, and its bash can overwrite the index with anything
// (a link to /dev/zero). Its changes are kept through a private index instead: a copy of its own
// (git's stat cache, and the files it added despite .gitignore), or the base's when it left none git
// can read, or one holding an entry git never stages: a path through `..` (`git add -A` would read
// that file, out of the worktree) or inside `.git`, which only a hand-written index holds.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uncheckable } from "./git-folder-links.ts";
import { git, gitPlace, nulFields, runGit, type GitOptions, type PinnedWorktree } from "./git.ts";
import { copyIndex } from "./snapshot.ts";

/** An index larger than this (a child's bash can make one of any size) is not copied: the base's is read instead. */
const COPIED_MAX_BYTES = 1024 ** 3;

/** Runs `use` in the child's worktree with a private index, removed after. */
export async function withPrivateIndex<T>(worktree: PinnedWorktree, base: string, use: (place: GitOptions) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "pi-flow-index-"));
  try {
    const index = join(dir, "index");
    const place: GitOptions = { ...gitPlace(worktree), env: { GIT_INDEX_FILE: index } };
    if (!(await copiedReadable(join(worktree.gitDir, "index"), index, place))) {
      await rm(index, { force: true });
      await git(["read-tree", base], place);
    }
    return await use(place);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The most of the copied index's listing read: 4 million paths of 64 bytes (past it, the base's index is used). */
const LISTING_MAX_BYTES = 256 * 1024 * 1024;

/**
 * Whether the child's index (a plain file, never through a link) was copied to `to`, git can read
 * the copy, and it holds no path git never stages. The copy is what is checked, never the child's
 * file by path: a process the child left running can still swap it (copyIndex).
 */
async function copiedReadable(from: string, to: string, place: GitOptions): Promise<boolean> {
  if (!(await copyIndex(from, to, { noLinks: true, maxBytes: COPIED_MAX_BYTES }).catch(() => false))) return false;
  const listed = await runGit(["ls-files", "-z"], { ...place, maxStdoutBytes: LISTING_MAX_BYTES });
  return listed.code === 0 && !listed.overflowed && !nulFields(listed.stdout).some(uncheckable);
}
