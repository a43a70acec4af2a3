// A child's bash can replace its worktree folder, or a folder on the way to it, with a link to a
// folder out of it (the user's ~/.ssh, their checkout). git follows a linked work tree: keeping the
// child's changes would commit that folder's files as the child's, and `git worktree remove` would
// delete through the link once the child plants a `.git` file there. So the worktree's real path is
// read when it is made, and at settle one that no longer leads there is neither read nor removed
// through its path (docs/isolation.md, "Ref").
import { lstat, readlink, realpath, rm, stat, unlink } from "node:fs/promises";

/** Changes deliberately not kept, with the receipt warning that says so (the run's diagnostics say why). */
export class ChangesNotKept extends Error {
  readonly warning: "worktree_replaced" | "changes_too_large";
  constructor(warning: "worktree_replaced" | "changes_too_large", message: string) {
    super(message);
    this.warning = warning;
  }
}

/** A folder's device and inode: another folder moved or made in the worktree's place has others. */
export interface FolderIdentity {
  dev: bigint;
  ino: bigint;
}

/** The identity of the folder `path` leads to. */
export async function folderIdentity(path: string): Promise<FolderIdentity> {
  const { dev, ino } = await stat(path, { bigint: true });
  return { dev, ino };
}

/** The folder `path` leads to (links followed), or undefined when nothing is there. */
const realPathOf = (path: string): Promise<string | undefined> => realpath(path).catch(() => undefined);

/**
 * Why `path` is no longer the worktree folder made at `madeAt` (its real path then) as `madeAs`
 * (its identity then, when known): a link, a file, another folder (one of the user's moved there,
 * which removing would delete), or a folder on the way replaced with a link. Undefined when it
 * still is, or is gone.
 */
export async function worktreeReplaced(path: string, madeAt: string, madeAs?: FolderIdentity): Promise<string | undefined> {
  const info = await lstat(path, { bigint: true }).catch(() => null);
  if (!info) return undefined; // removed: the caller says so
  if (info.isSymbolicLink()) {
    const target = await readlink(path).catch(() => "?");
    return `its worktree folder ${path} was replaced with a link to ${JSON.stringify(target)} (leading to ${(await realPathOf(path)) ?? "nothing"})`;
  }
  if (!info.isDirectory()) return `its worktree folder ${path} was replaced with a file`;
  const now = await realPathOf(path);
  if (now !== madeAt) return `a folder on the way to its worktree ${path} was replaced with a link: the path leads to ${now ?? "nothing"} instead of ${madeAt}`;
  if (madeAs && (info.dev !== madeAs.dev || info.ino !== madeAs.ino)) return `its worktree folder ${path} was replaced with another folder (moved or made there: not the one pi-flow made, so it is left where it is)`;
  return undefined;
}

/** The message a replaced worktree's run carries (diagnostic and the `changes.json` reason). */
export const replacedMessage = (why: string): string =>
  `${why}. Its changes are not kept: git would take that folder's files for the child's. Nothing was removed there or through a link (only a link put in its place, and the worktree's registration); the child could write there while it ran, so look at it`;

/**
 * Forgets a replaced worktree without going through its path: a link put in its place is removed
 * (the link, never what it leads to), then its registration (`gitDir`, when known, and `git
 * worktree prune`, which drops one whose folder is gone). A folder on the way replaced with a link is left as it is.
 */
export async function forgetReplacedWorktree(path: string, gitDir: string | undefined, prune: () => Promise<unknown>): Promise<void> {
  if ((await lstat(path).catch(() => null))?.isSymbolicLink()) await unlink(path);
  if (gitDir !== undefined) await rm(gitDir, { recursive: true, force: true }); // rm removes a link there, never what it leads to
  await prune();
}
