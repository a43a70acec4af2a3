// One child's isolation: a detached worktree made from the user's tree as they see it, under the
// flow home by project (never inside the user's working tree), removed when the child settles.
import { lstat, mkdir, realpath, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, join, resolve } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { ownIdentity, projectKey } from "../runs/index.ts";
import { captureChanges, dropChanges, type CaptureOptions, type ChangeStats } from "./changes.ts";
import { git, GitTimedOut, runGit } from "./git.ts";
import { GitFileUnreadable, madeInCommonDir } from "./git-files.ts";
import { assertGitFolderReadable, removeWorktreeFolderLinks } from "./git-folder-scan.ts";
import { gitControls, type GitControls } from "./git-controls.ts";
import { readPlainFile } from "./plain-file.ts";
import { patientWait, withRepositoryLock, type WaitOptions } from "./repository-lock.ts";
import type { Repository } from "./repository.ts";
import { refTips, type RefTips } from "./moved-refs.ts";
import { ChangesNotKept, folderIdentity, forgetReplacedWorktree, replacedMessage, worktreeReplaced, type FolderIdentity } from "./replaced-worktree.ts";
import { repairStash, stashEntries, type StashEntry, type StashRepair } from "./shared-stash.ts";
import { flowHomeInTree, snapshotCommit } from "./snapshot.ts";

export interface Isolation {
  repo: Repository;
  runId: string;
  /** The worktree's top directory. */
  path: string;
  /** Its real path when it was made: at settle, a path that leads elsewhere was replaced (replaced-worktree.ts). */
  madeAt: string;
  /** Its device and inode when it was made: at settle, another folder in its place was put there (replaced-worktree.ts). */
  madeAs: FolderIdentity;
  /** Where the child works: the parent's subdirectory, mapped into the worktree. */
  cwd: string;
  /** The commit the worktree was made from. */
  base: string;
  /** Its administrative folder in the repository, read before the child runs (see PinnedWorktree in git.ts). */
  gitDir: string;
  /** The repository's git config, hooks and attributes as the child's run began (git-controls.ts). */
  controls: GitControls;
  /** The repository's stash list as the child's run began (shared-stash.ts). */
  stash: StashEntry[];
  /** The repository's branches and tags as the child's run began (moved-refs.ts). */
  refs: RefTips;
}

/** Where this project's worktrees live: `<home>/worktrees/<projectKey>/`. */
export const worktreesDir = (home: string, root: string): string => join(home, "worktrees", projectKey(root));

/**
 * configuration_invalid when `<home>/worktrees`, or this project's folder in it, is a link: crash
 * cleanup reaches a worktree by the flow home's real path and removes nothing through a link on the
 * way (a child's bash may have put it there), so a worktree made through one would be left forever.
 */
export async function assertWorktreesDirReal(home: string, root: string): Promise<void> {
  for (const folder of [join(home, "worktrees"), worktreesDir(home, root)]) {
    if (!(await lstat(folder).catch(() => null))?.isSymbolicLink()) continue;
    throw new FlowError(
      "configuration_invalid",
      `isolation "worktree" cannot be used: ${folder} is a link, and pi-flow makes children's worktrees only in a folder of the flow home itself (crash cleanup never removes anything through a link). To keep worktrees on another disk, set PI_FLOW_HOME to a folder there; else remove the link. Nothing was changed.`,
    );
  }
}

/** Beside each worktree, the process that owns it: crash cleanup removes those of dead processes. */
export const ownerFile = (dir: string, runId: string): string => join(dir, `${runId}.owner.json`);

/**
 * Makes the worktree of `runId` from `base` (default: the tree the user sees now). Another process
 * that hangs holding the repository lock is named through `wait.onWaiting`, and the child fails with
 * run_unavailable naming it once LOCK_PATIENCE_MS have passed.
 */
export async function createIsolation(repo: Repository, runId: string, home: string, base?: string, wait: WaitOptions = {}): Promise<Isolation> {
  base ??= await snapshotCommit(repo, home);
  await assertWorktreesDirReal(home, repo.root);
  const dir = worktreesDir(home, repo.root);
  const path = join(dir, runId);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(ownerFile(dir, runId), JSON.stringify({ pid: process.pid, host: hostname(), ...ownIdentity(), root: repo.root }), { mode: 0o600 });
  try {
    await withRepositoryLock(repo.commonDir, async () => {
      await assertGitFolderReadable(repo.commonDir); // a child that waited for its slot: a sibling's bash may have put a FIFO there since
      await removeWorktreeFolderLinks(repo.commonDir);
      await git(["worktree", "add", "--detach", "--quiet", path, base], { cwd: repo.root });
    }, patientWait(`making run ${runId}'s worktree`, wait));
  } catch (error) {
    // No worktree was made (the lock was not had, or git failed): no owner file is left for crash cleanup to chase.
    await rm(ownerFile(dir, runId), { force: true });
    throw error;
  }
  // Read now, while only git has written in the worktree.
  const gitDir = await git(["rev-parse", "--absolute-git-dir"], { cwd: path });
  const cwd = resolve(path, repo.prefix);
  await mkdir(cwd, { recursive: true }); // an empty or ignored subdirectory has no files to check out
  const controls = await gitControls(repo.commonDir);
  return { repo, runId, path, madeAt: await realpath(path), madeAs: await folderIdentity(path), cwd, base, gitDir, controls, stash: await stashEntries(repo.root), refs: await refTips(repo.root) };
}

/** A worktree's path, its real path when made, and (when known) its identity then and its registration in the git folder. */
export type MadeWorktree = Pick<Isolation, "path" | "madeAt"> & Partial<Pick<Isolation, "madeAs" | "gitDir">>;

/**
 * Removes the worktree (whatever it holds) and its registration, then its owner file. Given up
 * (run_unavailable) when another process hangs holding the repository lock: the owner file stays,
 * so crash cleanup removes the worktree once its owner has ended. A worktree whose path no longer
 * leads to `madeAt` (its real path when made) was replaced with a link: nothing is removed through it.
 */
export async function removeWorktree(commonDir: string, root: string, worktree: MadeWorktree, owner: string, wait: WaitOptions = {}): Promise<void> {
  const { path, madeAt, madeAs, gitDir } = worktree;
  await withRepositoryLock(commonDir, async () => {
    await assertGitFolderReadable(commonDir); // git worktree reads every worktree's folder there
    await removeWorktreeFolderLinks(commonDir); // git worktree remove and prune delete through them
    if (await worktreeReplaced(path, madeAt, madeAs)) {
      await forgetReplacedWorktree(path, gitDir, () => runGit(["worktree", "prune"], { cwd: root }));
      return;
    }
    const removed = await runGit(["worktree", "remove", "--force", "--force", path], { cwd: root });
    if (removed.code !== 0) {
      await rm(path, { recursive: true, force: true });
      await runGit(["worktree", "prune"], { cwd: root });
    }
  }, patientWait(`removing the worktree ${basename(path)}`, wait));
  await rm(owner, { recursive: true, force: true });
}

/** What settling tells its caller besides the changes' counts (see captureChanges for the first two). */
export interface SettleNotices extends Pick<CaptureOptions, "onNestedRepositories" | "onSubmoduleWrites" | "onUnkeptFiles" | "keptChangesMax"> {
  /**
   * The worktree could not be removed (another process hangs holding the repository lock): the
   * changes are kept even so, and crash cleanup removes the worktree once this process has ended.
   */
  onWorktreeLeft?: (why: string) => void;
  /** How removing the worktree waits for the repository lock. */
  wait?: WaitOptions;
  /** The shared stash list was repaired: the user's entries the child took put back, its own taken off (shared-stash.ts). */
  onStashRepaired?: (repair: StashRepair) => void;
}

/**
 * The child settled: its changes are kept on refs/pi-flow/<runId> and the worktree is removed,
 * also when capturing failed (the error is rethrown after), except when its changes were over the
 * cap (changes_too_large): then nothing else holds what the child wrote, so its worktree is left
 * for the user to copy from, and crash cleanup removes it once this process has ended. A worktree
 * the repository lock kept from being removed is told to `onWorktreeLeft` when given, and never
 * loses the kept changes.
 */
export async function settleIsolation(isolation: Isolation, home: string, told: SettleNotices = {}): Promise<ChangeStats | null> {
  const dir = worktreesDir(home, isolation.repo.root);
  const { onWorktreeLeft, onStashRepaired, wait, ...capture } = told;
  let leftToCopy = false;
  try {
    // The child's bash may have put a FIFO among the refs, objects or worktree folders git reads.
    await assertGitFolderReadable(isolation.repo.commonDir);
    await restoreCommonDir(isolation.gitDir);
    // Never in the way of keeping the changes: a repair git refuses is told, not thrown.
    const repair = await repairStash(isolation.repo.root, isolation.stash, isolation.base, { path: isolation.path, gitDir: isolation.gitDir }).catch((error: unknown): StashRepair => ({ restored: [], removed: [], failed: error instanceof Error ? error.message : String(error) }));
    if (repair.restored.length + repair.removed.length > 0 || repair.failed !== undefined) onStashRepaired?.(repair);
    await assertNotReplaced(isolation);
    // Removed by hand while the child ran: say so, rather than git's "spawn ENOENT" for its missing cwd.
    if (!(await lstat(isolation.path).catch(() => null))) throw new Error("its worktree was removed before the child settled");
    const captured = await captureChanges(isolation, isolation.base, isolation.runId, { home, flowHomeInTree: flowHomeInTree(isolation.repo.root, home), ...capture });
    // Again: a process the child left running may have replaced it while git read it.
    await assertNotReplaced(isolation).catch(async (error: unknown) => {
      if (captured) await dropChanges(isolation.repo.root, isolation.runId);
      throw error;
    });
    return captured?.stats ?? null;
  } catch (error) {
    if (!(error instanceof ChangesNotKept) || error.warning !== "changes_too_large") throw error;
    leftToCopy = true;
    throw new ChangesNotKept(error.warning, `${error.message}. Its worktree is left as the child left it, at ${isolation.path}: copy what you need from there before a session start after this process has ended, which removes it`);
  } finally {
    if (!leftToCopy) await removeWorktree(isolation.repo.commonDir, isolation.repo.root, isolation, ownerFile(dir, isolation.runId), wait).catch((error: unknown) => {
      // Only a lock held elsewhere leaves the worktree with the changes kept; git refused or stopped is the settle's own failure.
      if (!onWorktreeLeft || !(error instanceof FlowError) || error.code !== "run_unavailable" || error instanceof GitFileUnreadable || error instanceof GitTimedOut) throw error;
      onWorktreeLeft(error.message);
    });
  }
}

/**
 * Puts back the `commondir` file of the worktree whose own folder is `gitDir` when it no longer
 * leads to the repository holding that folder: every worktree shares the folder it is in, so a
 * child's bash can point it at a repository of its own (or replace it with a FIFO), and git reads
 * that worktree's refs there, so its changes would be kept there. git writes `../..` in it.
 */
export async function restoreCommonDir(gitDir: string): Promise<void> {
  // Its folder replaced with a link (to a folder of the user's): nothing is written through it, and removeWorktree removes the link.
  if ((await realpath(gitDir).catch(() => undefined)) !== gitDir) return;
  const file = join(gitDir, "commondir");
  const bytes = await readPlainFile(file, { noLinks: true, maxBytes: 4096 });
  if (bytes !== null) {
    const named = bytes.toString("utf8").trim();
    const [leadsTo, made] = await Promise.all([realpath(resolve(gitDir, named)).catch(() => undefined), realpath(madeInCommonDir(gitDir))]);
    if (leadsTo === made) return;
  }
  await rm(file, { force: true }); // removes a link or FIFO, never opening it
  await writeFile(file, "../..\n", { flag: "wx" });
}

/** ChangesNotKept (worktree_replaced) when the child replaced its worktree folder, or one on the way, with a link. */
async function assertNotReplaced(isolation: Isolation): Promise<void> {
  const why = await worktreeReplaced(isolation.path, isolation.madeAt, isolation.madeAs);
  if (why !== undefined) throw new ChangesNotKept("worktree_replaced", replacedMessage(why));
}
