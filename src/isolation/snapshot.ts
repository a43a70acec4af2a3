// The parent's tree as the user sees it, as a commit object: HEAD plus tracked changes not yet
// committed plus untracked files that are not ignored. The user's index, refs, stash and HEAD are
// never touched: a private index (a copy of theirs, so git's stat cache stays warm) takes `add -A`.
import { constants, createWriteStream, realpathSync } from "node:fs";
import { lstat, mkdtemp, open, rm, utimes } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative, sep } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { errorCode } from "../runs/index.ts";
import { addAll } from "./add-all.ts";
import { GitFileUnreadable } from "./git-files.ts";
import { git, gitPlace, nulFields, runGit, type PinnedWorktree } from "./git.ts";
import type { Repository } from "./repository.ts";

/** The commit HEAD points at, or undefined on a branch with no commit yet. */
export async function headCommit(root: string): Promise<string | undefined> {
  const result = await runGit(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { cwd: root });
  return result.code === 0 ? result.stdout.toString("utf8").trim() : undefined;
}

const realPathOf = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path; // not made yet: nothing of it can be in a tree
  }
};

/**
 * Where the flow home sits in the working tree at `root` ("dot-pi/flow"), or undefined when it is
 * elsewhere. Its files (run evidence, other children's worktrees) are pi-flow's, not the user's.
 */
export function flowHomeInTree(root: string, flowHome: string | undefined): string | undefined {
  // The root is a real path: so must the flow home be (a home reached through a link, /tmp on macOS).
  const inside = flowHome === undefined ? "" : relative(root, realPathOf(flowHome));
  return inside === "" || inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside) ? undefined : inside.split(sep).join("/");
}

/**
 * configuration_invalid when the flow home is the working tree's top folder: every file of the tree
 * would be pi-flow's (run evidence, children's worktrees), so none could be left out of a child's
 * base and changes, and an apply would write over run evidence (another run's changes.json).
 */
export function assertFlowHomeApart(root: string, flowHome: string | undefined): void {
  if (flowHome === undefined || realPathOf(flowHome) !== root) return;
  throw new FlowError(
    "configuration_invalid",
    `isolation "worktree" cannot be used: the flow home ${JSON.stringify(flowHome)} (PI_FLOW_HOME, or the agent directory's flow folder) is the top of the git working tree ${JSON.stringify(root)}, so its run evidence and children's worktrees would be taken for the user's files. Set PI_FLOW_HOME to a folder outside the working tree, or a subfolder of it. Nothing was changed.`,
  );
}

/**
 * The pathspec that leaves the flow home (`inside`, from flowHomeInTree) out of `add -A` in a
 * repository or a child's worktree, when git does not ignore it there already.
 */
export async function excludeFlowHome(place: string | PinnedWorktree, inside: string | undefined): Promise<string[]> {
  if (inside === undefined) return [];
  // git refuses an exclusion of an ignored path ("paths are ignored"), and add -A skips it anyway.
  const ignored = await runGit(["check-ignore", "-q", "--", inside], gitPlace(place));
  return ignored.code === 0 ? [] : [`:(top,exclude)${inside}`];
}

/** How an index is copied: through a link or not, and up to what size. */
export interface IndexCopy {
  /** A link is refused (a child's index), rather than followed (the user's, as git follows it). */
  noLinks?: boolean;
  maxBytes?: number;
}

/**
 * Copies the index at `from` to `to`, with its own modification time. Git takes an entry whose
 * file changed in the same second as the index was written ("racily clean") as changed only while
 * the index is no newer than it: a copy stamped now would hide an edit of the same size made in
 * that second, and the edit would be missing from the tree. Opened first, then checked and read
 * through that one descriptor: a file swapped in after a check by path (by a process a child left
 * running) is never what is read, and a FIFO opens without waiting (O_NONBLOCK) and is refused.
 * False when there is none: add -A then starts from an empty index.
 */
export async function copyIndex(from: string, to: string, { noLinks = false, maxBytes = Number.POSITIVE_INFINITY }: IndexCopy = {}): Promise<boolean> {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (noLinks ? constants.O_NOFOLLOW : 0);
  const handle = await open(from, flags).catch((error: unknown) => {
    if (errorCode(error) === "ENOENT") return undefined;
    throw errorCode(error) === "ELOOP" ? new GitFileUnreadable(from, "a link") : error;
  });
  if (!handle) return false;
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new GitFileUnreadable(from, "no plain file");
    if (info.size > maxBytes) throw new Error(`the index ${JSON.stringify(from)} is over ${maxBytes} bytes`);
    await pipeline(handle.createReadStream({ autoClose: false, start: 0 }), createWriteStream(to, { mode: 0o600 }));
    await utimes(to, info.atime, info.mtime); // milliseconds: never newer than the original
    return true;
  } finally {
    await handle.close();
  }
}

/**
 * Clears, in the private index, the bits that tell git not to look at a file the user has
 * (assume-unchanged, skip-worktree: a local config kept out of commits). add -A would keep the
 * indexed version, and an apply would write the child's over the user's uncommitted edit of it.
 * A skip-worktree file absent from the tree (a sparse checkout) keeps its bit: it is not deleted.
 */
async function lookAtHiddenEdits(root: string, env: Record<string, string>): Promise<void> {
  const listed = await runGit(["ls-files", "-v", "-z"], { cwd: root, env });
  if (listed.code !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  // One flag per update-index: given both, git applies only the last.
  const hidden = { "--no-assume-unchanged": [] as string[], "--no-skip-worktree": [] as string[] };
  for (const field of nulFields(listed.stdout)) {
    const tag = field[0] ?? "";
    const path = field.slice(2);
    const flag = tag !== tag.toUpperCase() ? "--no-assume-unchanged" : tag === "S" ? "--no-skip-worktree" : undefined;
    if (flag && (await lstat(join(root, path)).catch(() => null))) hidden[flag].push(path);
  }
  for (const [flag, paths] of Object.entries(hidden)) {
    if (paths.length > 0) await git(["update-index", flag, "-z", "--stdin"], { cwd: root, env, input: paths.map((path) => `${path}\0`).join("") });
  }
}

/**
 * Writes the tree the user sees at `repo.root` into the object store; returns its tree ID. A flow
 * home inside the working tree (a dotfiles repository at ~) is left out: its run evidence and
 * other children's worktrees are not the user's files.
 */
export async function workingTreeId(repo: Repository, flowHome?: string): Promise<string> {
  assertFlowHomeApart(repo.root, flowHome);
  const dir = await mkdtemp(join(tmpdir(), "pi-flow-index-"));
  const index = join(dir, "index");
  try {
    const userIndex = await git(["rev-parse", "--path-format=absolute", "--git-path", "index"], { cwd: repo.root });
    await copyIndex(userIndex, index);
    const env = { GIT_INDEX_FILE: index };
    await lookAtHiddenEdits(repo.root, env);
    // A folder of the user's that holds a repository with no commit yet is not in the tree git sees.
    await addAll({ cwd: repo.root, env }, await excludeFlowHome(repo.root, flowHomeInTree(repo.root, flowHome)));
    return await git(["write-tree"], { cwd: repo.root, env });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Which of `paths` no longer read on disk as `tree` (the user's tree as an apply captured it) holds
 * them: an edit saved since, a file made or deleted since. Only those paths are read again, in a
 * private index made from `tree`; a path neither `tree` nor the disk holds is unchanged.
 */
export async function changedSince(repo: Repository, tree: string, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const dir = await mkdtemp(join(tmpdir(), "pi-flow-index-"));
  try {
    // Literal pathspecs: a name a child chose is never read as a pattern.
    const env = { GIT_INDEX_FILE: join(dir, "index"), GIT_LITERAL_PATHSPECS: "1" };
    await git(["read-tree", tree], { cwd: repo.root, env });
    const listed = await runGit(["ls-files", "-z"], { cwd: repo.root, env });
    const held = new Set(nulFields(listed.stdout));
    const present: string[] = [];
    for (const path of paths) if (held.has(path) || (await lstat(join(repo.root, path)).catch(() => null))) present.push(path);
    if (present.length === 0) return [];
    // -f: an ignored file made since where the apply would write is a change too.
    await git(["add", "-A", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"], { cwd: repo.root, env, input: present.map((path) => `${path}\0`).join("") });
    const again = await git(["write-tree"], { cwd: repo.root, env });
    if (again === tree) return [];
    const diff = await runGit(["diff-tree", "-r", "-z", "--no-renames", "--name-only", tree, again], { cwd: repo.root });
    const touched = new Set(paths);
    return nulFields(diff.stdout).filter((path) => touched.has(path));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A commit of `tree` whose one parent is `parent` (none when undefined), made in a repository or a child's worktree. */
export function commitTree(root: string | PinnedWorktree, tree: string, parent: string | undefined, message: string): Promise<string> {
  return git(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", message], gitPlace(root));
}

/**
 * The user's current tree as a commit on top of HEAD: the base a worktree child starts from.
 * `trailer`: lines after the message (the flow home's, see flowHomeLine in changes.ts).
 */
export async function snapshotCommit(repo: Repository, flowHome?: string, trailer = ""): Promise<string> {
  const tree = await workingTreeId(repo, flowHome);
  return commitTree(repo.root, tree, await headCommit(repo.root), `pi-flow: the working tree as the user saw it${trailer === "" ? "" : `\n\n${trailer}`}`);
}
