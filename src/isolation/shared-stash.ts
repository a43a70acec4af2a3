// The stash is one ref of the repository (refs/stash), shared by every worktree: a child's
// `git stash pop` or `git stash drop` in its worktree takes the user's entry (an agent's `git stash;
// npm test; git stash pop` with nothing of its own to stash pops the user's top entry into the
// child's tree and drops it from their list), and a `git stash` it never pops is left on the user's
// list, where their next `git stash pop` applies the child's changes to their checkout. The list is
// read when the child's worktree is made and again when it settles: the user's entries that went
// are put back, and the child's own are taken off (docs/isolation.md).
import { realpathSync } from "node:fs";
import { git, nulFields, runGit } from "./git.ts";

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
  /** The entries the child stashed in its worktree (their first parent is its base or a commit of its own), taken off the list. */
  removed: StashEntry[];
  /** Why the list could not be repaired (git failed): the child's changes are kept even so. */
  failed?: string;
}

/** Whether a stash commit was made in the child's worktree: made on top of its base. */
async function stashedByChild(root: string, commit: string, base: string): Promise<boolean> {
  const made = await runGit(["merge-base", "--is-ancestor", base, `${commit}^1`], { cwd: root });
  return made.code === 0;
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
 * worktree is at `ownPath`) made; what it did.
 */
export async function repairStash(root: string, before: readonly StashEntry[], base: string, ownPath: string): Promise<StashRepair> {
  const now = await stashEntries(root);
  const siblings = await otherWorktreeHeads(root, ownPath);
  const nowCommits = new Set(now.map((entry) => entry.commit));
  const beforeCommits = new Set(before.map((entry) => entry.commit));
  const removed: StashEntry[] = [];
  // From the oldest: dropping stash@{n} renumbers only the newer ones above it.
  for (let index = now.length - 1; index >= 0; index--) {
    const entry = now[index]!;
    if (beforeCommits.has(entry.commit) || !(await stashedByChild(root, entry.commit, base))) continue;
    if (siblings.has(await git(["rev-parse", `${entry.commit}^1`], { cwd: root }))) continue; // maybe a sibling's, still to pop
    await git(["stash", "drop", "-q", `stash@{${index}}`], { cwd: root });
    removed.push(entry);
  }
  const restored = before.filter((entry) => !nowCommits.has(entry.commit));
  // Oldest first, so entries popped from the top come back in their order.
  // Dated now: the stash list stops at a reflog entry dated 1970 (pi-flow's fixed commit date), hiding those below it.
  const env = { GIT_COMMITTER_DATE: new Date().toISOString() };
  for (const entry of [...restored].reverse()) await git(["stash", "store", "-q", "-m", entry.message, entry.commit], { cwd: root, env });
  return { restored, removed: removed.reverse() };
}
