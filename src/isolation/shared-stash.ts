// The stash is one ref of the repository (refs/stash), shared by every worktree: a child's
// `git stash pop` or `git stash drop` in its worktree takes the user's entry (an agent's `git stash;
// npm test; git stash pop` with nothing of its own to stash pops the user's top entry into the
// child's tree and drops it from their list), and a `git stash` it never pops is left on the user's
// list, where their next `git stash pop` applies the child's changes to their checkout. The list is
// read when the child's worktree is made and again when it settles: the user's entries that went
// are put back, and the child's own are taken off (docs/isolation.md).
import { realpathSync } from "node:fs";
import { lstat, readlink } from "node:fs/promises";
import { readPlainFile } from "./plain-file.ts";
import { join } from "node:path";
import { readBlobs } from "./checkout.ts";
import { git, nulFields, runGit, type PinnedWorktree } from "./git.ts";
import { headsHeld } from "./moved-refs.ts";

export interface StashEntry {
  commit: string;
  /** Its reflog message ("On main: wip", "WIP on main: 1a2b3c4 …"), given back when it is put back. */
  message: string;
}

/** The stash list, newest first. */
export async function stashEntries(root: string): Promise<StashEntry[]> {
  const listed = await runGit(["log", "-g", "-z", "--format=%H%x00%gs", "refs/stash", "--"], { cwd: root });
  if (listed.code !== 0) return []; // no stash
  const fields = nulFields(listed.stdout);
  const entries: StashEntry[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) entries.push({ commit: fields[i]!, message: fields[i + 1]! });
  return entries;
}

export interface StashRepair {
  /** The user's entries that left the list while the child ran, put back on top of it. */
  restored: StashEntry[];
  /** The entries the child stashed in its worktree (their first parent is its base or a commit its HEAD held), taken off the list. */
  removed: StashEntry[];
  /** Why the list could not be repaired (git failed): the child's changes are kept even so. */
  failed?: string;
}

/**
 * Whether a stash commit was made in the child's worktree: on top of its base, or on a commit its
 * HEAD held (`held`: one of the user's branches it checked out, or a commit it made there).
 */
async function stashedByChild(root: string, commit: string, base: string, held: () => Promise<ReadonlySet<string>>): Promise<boolean> {
  const made = await runGit(["merge-base", "--is-ancestor", base, `${commit}^1`], { cwd: root });
  if (made.code === 0) return true;
  return (await held()).has(await git(["rev-parse", `${commit}^1`], { cwd: root }));
}

/** A file a stash entry holds (its id, or null where it deletes the file) and its mode. */
interface Held {
  path: string;
  mode: string;
  id: string | null;
}

/** The files a stash entry changes (its commit against its first parent) and the untracked ones it holds (its third parent). */
async function heldFiles(root: string, commit: string): Promise<Held[]> {
  const changed = await runGit(["diff-tree", "-r", "-z", "--no-renames", `${commit}^1`, commit], { cwd: root });
  if (changed.code !== 0) return [];
  const held: Held[] = [];
  const fields = nulFields(changed.stdout);
  // Pairs of ":<old mode> <new mode> <old id> <new id> <status>" and the path.
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [, mode = "", , id = "", status = ""] = fields[i]!.slice(1).split(" ");
    held.push({ path: fields[i + 1]!, mode, id: status === "D" ? null : id });
  }
  const untracked = await runGit(["ls-tree", "-r", "-z", `${commit}^3`], { cwd: root });
  for (const line of untracked.code === 0 ? nulFields(untracked.stdout) : []) {
    const tab = line.indexOf("\t");
    const [mode = "", , id = ""] = line.slice(0, tab).split(" ");
    held.push({ path: line.slice(tab + 1), mode, id });
  }
  return held;
}

/**
 * Whether a stash entry's files stand in the user's checkout at `root` as it holds them: the user
 * popped it there themselves (a child's pop lands in its own worktree), so it is not put back.
 * Anything else (a file edited since, a filter that changes its bytes) reads as not landed: put
 * back, a duplicate at worst, never a loss.
 */
async function landedInCheckout(root: string, commit: string): Promise<boolean> {
  const held = await heldFiles(root, commit);
  if (held.length === 0) return false;
  const blobs = await readBlobs({ cwd: root }, held.flatMap((file) => (file.id === null || file.mode === "160000" ? [] : [file.id])));
  for (const file of held) {
    const at = join(root, file.path);
    const stats = await lstat(at).catch(() => null);
    if (file.id === null) {
      if (stats) return false;
      continue;
    }
    const wanted = blobs.get(file.id);
    if (!stats || wanted === undefined) return false;
    const bytes = file.mode === "120000" ? (stats.isSymbolicLink() ? Buffer.from(await readlink(at)) : null) : stats.isFile() ? await readPlainFile(at, { noLinks: true }) : null;
    if (!bytes?.equals(wanted)) return false;
  }
  return true;
}

const realPath = (path: string): string => {
  try {
    return realpathSync.native(path);
  } catch {
    return path; // its folder is gone (a worktree git will prune)
  }
};

/**
 * The commits the repository's other worktrees stand on: a sibling child started from the same tree
 * has the same base, and an entry stashed on its HEAD may be its own, still to be popped.
 */
async function otherWorktreeHeads(root: string, ownPath: string): Promise<Set<string>> {
  const listed = await runGit(["worktree", "list", "--porcelain", "-z"], { cwd: root });
  const heads = new Set<string>();
  let path = "";
  for (const field of nulFields(listed.stdout)) {
    if (field.startsWith("worktree ")) path = field.slice("worktree ".length);
    else if (field.startsWith("HEAD ") && realPath(path) !== realPath(ownPath)) heads.add(field.slice("HEAD ".length));
  }
  return heads;
}

/**
 * Puts back the user's stash entries missing since `before` and takes off those the child (whose
 * worktree is `own`) made; what it did.
 */
export async function repairStash(root: string, before: readonly StashEntry[], base: string, own: PinnedWorktree): Promise<StashRepair> {
  const now = await stashEntries(root);
  const siblings = await otherWorktreeHeads(root, own.path);
  let heads: Promise<ReadonlySet<string>> | undefined;
  const held = (): Promise<ReadonlySet<string>> => (heads ??= headsHeld(own).then((commits) => new Set(commits)));
  const nowCommits = new Set(now.map((entry) => entry.commit));
  const beforeCommits = new Set(before.map((entry) => entry.commit));
  const removed: StashEntry[] = [];
  // From the oldest: dropping stash@{n} renumbers only the newer ones above it.
  for (let index = now.length - 1; index >= 0; index--) {
    const entry = now[index]!;
    if (beforeCommits.has(entry.commit) || !(await stashedByChild(root, entry.commit, base, held))) continue;
    // Maybe a sibling's, still to pop, or the user's own on the commit their checkout stands on.
    if (siblings.has(await git(["rev-parse", `${entry.commit}^1`], { cwd: root }))) continue;
    await git(["stash", "drop", "-q", `stash@{${index}}`], { cwd: root });
    removed.push(entry);
  }
  const restored: StashEntry[] = [];
  for (const entry of before) if (!nowCommits.has(entry.commit) && !(await landedInCheckout(root, entry.commit))) restored.push(entry);
  // Oldest first, so entries popped from the top come back in their order.
  // Dated now: the stash list stops at a reflog entry dated 1970 (pi-flow's fixed commit date), hiding those below it.
  const env = { GIT_COMMITTER_DATE: new Date().toISOString() };
  for (const entry of [...restored].reverse()) await git(["stash", "store", "-q", "-m", entry.message, entry.commit], { cwd: root, env });
  return { restored, removed: removed.reverse() };
}
