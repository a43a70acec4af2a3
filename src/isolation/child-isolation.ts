// What the child launcher asks of worktree isolation: a check before launch, a worktree while the
// child runs, and its changes kept as evidence (ref, counts, redacted patch) when it settles.
import { FlowError } from "../contract/errors.ts";
import { GIT_CONTROLS_CHANGED, type RepositoryWarning } from "../contract/warnings.ts";
import type { RunFiles } from "../runs/index.ts";
import { flowHomeLine, patchText, readChanges, type ChangeStats } from "./changes.ts";
import { holdBase, releaseBase } from "./held-base.ts";
import { nameList, writeChangeRecord, writePatch } from "./change-record.ts";
import { changedControls, gitControls } from "./git-controls.ts";
import { assertGitFolderReadable } from "./git-folder-scan.ts";
import type { KeptChangesMax } from "./kept-size.ts";
import { ChangesNotKept } from "./replaced-worktree.ts";
import { openRepository, type Repository } from "./repository.ts";
import { assertFlowHomeApart, snapshotCommit } from "./snapshot.ts";
import type { WaitOptions } from "./repository-lock.ts";
import { refsOnBase } from "./child-refs.ts";
import { deletedRefs, restoreMovedRefs, type MovedRef } from "./moved-refs.ts";
import type { StashEntry, StashRepair } from "./shared-stash.ts";
import { assertWorktreesDirReal, createIsolation, restoreCommonDir, settleIsolation, type Isolation } from "./worktree.ts";

/**
 * The repository a child asking for `isolation: "worktree"` (itself or through its profile) works
 * on, or undefined when it does not ask; configuration_invalid when `cwd` is not in a working tree,
 * when the flow home `home` is that working tree's top folder (see assertFlowHomeApart), or when its
 * worktrees folder is a link (assertWorktreesDirReal).
 */
export async function isolationRepository(asked: unknown, profileAsked: "worktree" | undefined, cwd: string, home: string): Promise<Repository | undefined> {
  if (asked !== undefined && asked !== "worktree") throw new FlowError("request_invalid", 'isolation must be "worktree".');
  if ((asked ?? profileAsked) !== "worktree") return undefined;
  const repo = await openRepository(cwd);
  assertFlowHomeApart(repo.root, home);
  await assertWorktreesDirReal(home, repo.root);
  return repo;
}

/** A child's isolation between launch and settle: its base now, its worktree once it runs. */
export interface PendingIsolation {
  repo: Repository;
  runId: string;
  home: string;
  /** The tree the user sees at launch, as a commit: what the child starts from, even if it waits for a slot. */
  base: Promise<string>;
  made?: Promise<Isolation>;
  /** The largest patch the patch view keeps (MAX_PATCH_VIEW_BYTES; a test sets less). */
  patchViewMaxBytes?: number;
  /** The most its kept changes may hold (KEPT_CHANGES_MAX in kept-size.ts; a test sets less). */
  keptChangesMax?: KeptChangesMax;
  /** The child's run, told who holds the repository lock when making its worktree waits for it. */
  evidence?: Evidence;
  /** How making and removing the worktree wait for the repository lock (a test waits less than LOCK_PATIENCE_MS). */
  lockWait?: WaitOptions;
  /** Set at settle: what its receipt warns of the repository every worktree shares (git config and hooks, branches and tags, stash). */
  warnings?: RepositoryWarning[];
}

/** Captures the child's base now (at launch); the worktree itself is made only when the child runs. */
export function startIsolation(repo: Repository, runId: string, home: string, options: Pick<PendingIsolation, "patchViewMaxBytes" | "keptChangesMax" | "evidence" | "lockWait"> = {}): PendingIsolation {
  // Named by its flow home: crash cleanup in another flow home sharing the repository leaves its held ref alone.
  const base = snapshotCommit(repo, home, flowHomeLine(home)).then(async (commit) => {
    await holdBase(repo.root, runId, commit); // until it settles: a git gc --prune=now must not delete it while the child waits
    return commit;
  });
  base.catch(() => undefined); // the child's run awaits it and fails with its error
  return { repo, runId, home, base, ...options };
}

/** Makes the child's worktree (once) and returns where it works: the parent's subdirectory in it. */
export async function isolationCwd(pending: PendingIsolation, signal?: AbortSignal): Promise<string> {
  return (await isolationWorktree(pending, signal)).cwd;
}

/**
 * Makes the child's worktree (once): where it works, its top directory and its base. `signal`
 * (the child's) stops a wait for the repository lock: a cancelled child does not wait for it.
 */
export async function isolationWorktree(pending: PendingIsolation, signal?: AbortSignal): Promise<Pick<Isolation, "cwd" | "path" | "base" | "gitDir">> {
  pending.made ??= pending.base.then((base) => createIsolation(pending.repo, pending.runId, pending.home, base, { ...lockWaitOf(pending), ...(signal ? { signal } : {}) }));
  pending.made.catch(() => undefined);
  return await pending.made;
}

/**
 * The child settled: keeps its changes (ref, counts and redacted patch beside its evidence in
 * `runDir`) and removes its worktree. Undefined when it changed nothing or never got a worktree.
 */
export async function finishIsolation(
  pending: PendingIsolation,
  files: RunFiles,
  home: string,
  evidence: Evidence,
): Promise<ChangeStats | undefined> {
  try {
    // A child that never ran (cancelled while queued) never got a worktree: nothing to keep.
    return pending.made ? await keepChanges(pending, pending.made, files, home, evidence) : undefined;
  } catch (error) {
    // The run's result stands; only the changes could not be kept, and its diagnostics say why.
    const reason = (error as Error).message;
    evidence.appendDiagnostic({ level: "warn", code: "changes_unavailable", message: `the child's changes could not be kept: ${reason}` });
    // Not kept on purpose (its worktree replaced with a link, or too large): its receipt says so too.
    if (error instanceof ChangesNotKept) pending.warnings = [...new Set([...(pending.warnings ?? []), error.warning])];
    // Remembered beside the run, so apply says why instead of "nothing to apply".
    await writeChangeRecord(files, { files: 0, insertions: 0, deletions: 0, state: "unavailable", root: pending.repo.root, reason }).catch(() => undefined);
    return undefined;
  } finally {
    // Its kept changes (if any) name the base as their parent now.
    await releaseBase(pending.repo.root, pending.runId).catch(() => undefined);
  }
}

type Evidence = { appendDiagnostic(entry: { level: "info" | "warn"; code: string; message: string }): void };

/** A `warn` diagnostic that the child's receipt (and its workflow's) carries as a warning too. */
const warnOfRepository = (pending: PendingIsolation, evidence: Evidence, code: RepositoryWarning, message: string): void => {
  evidence.appendDiagnostic({ level: "warn", code, message });
  pending.warnings = [...new Set([...(pending.warnings ?? []), code])];
};

/** The wait for the repository lock, telling the child's run (info `repository_lock`) who holds it. */
const lockWaitOf = ({ evidence, lockWait }: PendingIsolation): WaitOptions => ({
  ...(evidence ? { onWaiting: (text: string) => evidence.appendDiagnostic({ level: "info", code: "repository_lock", message: text }) } : {}),
  ...lockWait,
});

/** A worktree left behind because another process hangs holding the repository lock: the changes are kept even so. */
const worktreeLeft = (evidence: Evidence) => (why: string) =>
  evidence.appendDiagnostic({
    level: "warn",
    code: "worktree_left",
    message: `the child's worktree could not be removed: ${why} Its changes are kept; the worktree is removed at a session start once this process has ended`,
  });

/** A repository the child made (or removed) in its worktree: not among the kept changes, and the run's diagnostics say so. */
const nestedRepositoriesLeftOut = (evidence: Evidence) => (paths: string[]) =>
  evidence.appendDiagnostic({
    level: "warn",
    code: "changes_unavailable",
    message: `the child's changes to git repositories inside its tree (folders with their own .git, made by git init or a clone, or removed) are not kept, at ${nameList(paths)}: git keeps such a folder as a link to a commit of that repository, which this one does not have. The rest of its changes are kept`,
  });

/** FIFOs and sockets removed from the worktree, and files in folders git takes for git folders: not among the kept changes (special-files.ts). */
const unkeptFilesLeftOut = (evidence: Evidence) => ({ special, inGitFolders }: { special: string[]; inGitFolders: string[] }) => {
  if (special.length > 0) {
    evidence.appendDiagnostic({ level: "warn", code: "changes_unavailable", message: `FIFOs or sockets the child left in its worktree are not kept (git keeps neither; one in place of a tracked file is kept as that file deleted): ${nameList(special)}. The rest of its changes are kept` });
  }
  if (inGitFolders.length > 0) {
    evidence.appendDiagnostic({ level: "warn", code: "changes_unavailable", message: `files in folders git takes for a git folder (.git in any case, .git. or git~1) are not kept: git never adds them. At ${nameList(inGitFolders)}. The rest of its changes are kept` });
  }
};

/** Files the child wrote in a submodule's folder: not among the kept changes, and the run's diagnostics say so. */
const submoduleWritesLeftOut = (evidence: Evidence) => (paths: string[]) =>
  evidence.appendDiagnostic({
    level: "warn",
    code: "changes_unavailable",
    message: `the child's files inside submodules are not kept, at ${nameList(paths)}: a worktree does not check submodules out, and git keeps a submodule as a commit of its own repository, not as files. The rest of its changes are kept`,
  });

const stashNames = (entries: readonly StashEntry[]): string => entries.map((entry) => `${entry.commit.slice(0, 12)} (${JSON.stringify(entry.message)})`).join(", ");

/** The shared stash list repaired at settle (shared-stash.ts): the run's diagnostics say what was put back and what taken off. */
const stashRepaired = (pending: PendingIsolation, evidence: Evidence) => ({ restored, removed, failed }: StashRepair) => {
  const said: string[] = failed === undefined ? [] : [`the repository's stash list (which every worktree shares) could not be checked after this child ran: ${failed}. Look at git stash list`];
  if (restored.length > 0) {
    said.push(`${restored.length} of the repository's stash entries left the stash list while this child ran, by it or another process (every worktree shares one stash: a git stash pop or drop in the child's worktree takes your entry), and are put back on top of it: ${stashNames(restored)}. One the child popped is among its changes too`);
  }
  if (removed.length > 0) {
    said.push(`the child's own git stash entries, made in its worktree, are taken off the shared stash list, where your next git stash pop would apply them to your checkout: ${stashNames(removed)} (git stash apply <commit> brings one back)`);
  }
  warnOfRepository(pending, evidence, "stash_repaired", said.join("; "));
};

/**
 * Branches and tags the child made on its own commits (see child-refs.ts): they stay in the user's
 * repository after its worktree is gone, and the run names them. Nothing is deleted: they may be what it was asked for.
 */
async function noteChildRefs(isolation: Isolation, evidence: Evidence): Promise<void> {
  const refs = await refsOnBase(isolation.repo.root, isolation.base);
  if (refs.length === 0) return;
  evidence.appendDiagnostic({
    level: "warn",
    code: "child_refs_left",
    message: `branches or tags were made on this child's commits in its worktree, and stay in the repository (every worktree shares its branches and tags; an apply lands files, never refs): ${nameList(refs)}. Its kept changes hold its files as it left them; delete those refs (git branch -D, git tag -d) if you do not want them`,
  });
}

const movedLine = ({ ref, from, keptOn, restored }: MovedRef): string =>
  restored ? `${ref} (put back on ${from.slice(0, 12)}; the child's tip is kept on ${keptOn})` : `${ref} (moved again since, so left as it is; the child's tip is also on ${keptOn})`;

/**
 * Branches and tags of the user's that the child moved onto its own commits (see moved-refs.ts):
 * put back where they were, the child's tips kept on refs, and the run names them.
 */
async function putBackMovedRefs(pending: PendingIsolation, isolation: Isolation, evidence: Evidence): Promise<void> {
  const deleted = await deletedRefs(isolation.repo.root, isolation.refs);
  if (deleted.length > 0) {
    const named = deleted.map(({ ref, held }) => `${ref} (held ${held})`).join(", ");
    warnOfRepository(pending, evidence, "refs_deleted", `branches or tags were deleted while this child ran, by it or another process (every worktree shares them; which one did is not recorded, so nothing is put back): ${named}. A deleted branch's reflog goes with it: git branch <name> <commit> brings one back`);
  }
  const moved = await restoreMovedRefs(isolation.repo.root, isolation.runId, isolation.refs, isolation.base, { path: isolation.path, gitDir: isolation.gitDir });
  if (moved.length === 0) return;
  warnOfRepository(
    pending,
    evidence,
    "child_moved_refs",
    `this child moved branches or tags of yours onto commits it made in its worktree (every worktree shares them: a git checkout of your branch and a commit, git branch -f, git update-ref): ${moved.map(movedLine).join(", ")}. Its kept changes hold its files as it left them; git branch -f <branch> <kept ref> moves a branch to the child's tip, git update-ref -d <kept ref> lets it go`,
  );
}

/**
 * The repository's git config, hooks or attributes changed while the child ran: every worktree
 * shares them, so a child's bash can change them for the user's checkout, where git runs the
 * programs they name (core.fsmonitor, core.hooksPath, a hook). No apply shows them: the run says so.
 */
async function noteChangedControls(pending: PendingIsolation, isolation: Isolation, evidence: Evidence): Promise<void> {
  const changed = changedControls(isolation.controls, await gitControls(isolation.repo.commonDir));
  if (changed.length === 0) return;
  warnOfRepository(
    pending,
    evidence,
    GIT_CONTROLS_CHANGED,
    `the repository's ${nameList(changed)} in its git folder changed while this child ran, by it or another process: every worktree shares them and git runs the programs they name (core.fsmonitor, core.hooksPath, hooks), for your checkout too. Read them before your next git command there`,
  );
}

async function keepChanges(pending: PendingIsolation, making: Promise<Isolation>, files: RunFiles, home: string, evidence: Evidence): Promise<ChangeStats | undefined> {
  const { patchViewMaxBytes } = pending;
  let isolation: Isolation;
  try {
    isolation = await making;
  } catch {
    return undefined; // no worktree was made; the run's error says why
  }
  // Before any git reads them: a FIFO the child's bash put among the refs or objects is named, not waited on.
  await assertGitFolderReadable(isolation.repo.commonDir);
  await restoreCommonDir(isolation.gitDir); // before any git pinned to the worktree reads refs through it
  await noteChangedControls(pending, isolation, evidence);
  await putBackMovedRefs(pending, isolation, evidence).catch((error: unknown) =>
    warnOfRepository(pending, evidence, "child_moved_refs", `the repository's branches and tags could not be checked for moves by this child: ${error instanceof Error ? error.message : String(error)}. Look at git branch -v`),
  );
  await noteChildRefs(isolation, evidence).catch(() => undefined); // a note only: the changes are kept whatever it finds
  const stats = await settleIsolation(isolation, home, {
    onNestedRepositories: nestedRepositoriesLeftOut(evidence),
    onSubmoduleWrites: submoduleWritesLeftOut(evidence),
    onUnkeptFiles: unkeptFilesLeftOut(evidence),
    onWorktreeLeft: worktreeLeft(evidence),
    onStashRepaired: stashRepaired(pending, evidence),
    ...(pending.lockWait ? { wait: pending.lockWait } : {}),
    ...(pending.keptChangesMax ? { keptChangesMax: pending.keptChangesMax } : {}),
  });
  if (!stats) return undefined;
  const kept = await readChanges(isolation.repo.root, isolation.runId);
  if (kept) {
    // The ref holds the changes; a patch that cannot be read back (a huge binary file's is longer
    // than a string may be) only goes unshown: the changes stay kept and applicable. The note is
    // written as a patch is, redacted: git's message may quote the repository's text.
    const patch = await patchText(isolation.repo.root, kept.base, kept.commit, patchViewMaxBytes).catch(
      (error: unknown) => `The patch is too large to show (${error instanceof Error ? error.message : String(error)}); the changes are kept and can be applied.\n`,
    );
    await writePatch(files, patch);
  }
  await writeChangeRecord(files, { ...stats, state: "kept", root: isolation.repo.root });
  return stats;
}
