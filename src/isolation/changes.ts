// A child's changes as evidence: its worktree's tree, committed on top of its base, kept on
// refs/pi-flow/<runId> in the user's repository (exact bytes, binary files included).
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { git, gitPlace, nulFields, PATCH_OPTIONS, runGit, type GitOptions, type PinnedWorktree } from "./git.ts";
import { inGitFolder, leftOut, removeSpecialFiles } from "./special-files.ts";
import { addChildTree } from "./child-attributes.ts";
import type { ChangeStats } from "./change-record.ts";
import { withPrivateIndex } from "./child-index.ts";
import { assertKeepable, assertTreeKeepable, treeBlobs, type KeptChangesMax } from "./kept-size.ts";
import { commitTree, excludeFlowHome } from "./snapshot.ts";

export type { ChangeStats } from "./change-record.ts";

export const changesRef = (runId: string): string => `refs/pi-flow/${runId}`;

/**
 * The line a kept commit's message names its flow home by (a hash, not the path): crash cleanup in
 * another flow home sharing the repository (another PI_FLOW_HOME or agent dir) must not take it for
 * a pruned run of its own and drop it.
 */
export const flowHomeLine = (home: string): string => `Pi-flow-home: ${createHash("sha256").update(home).digest("hex").slice(0, 16)}`;

/**
 * The files changed between two commits, with line counts (binary files count as changed, no
 * lines), in the repository at `root` or in a child's worktree.
 */
export async function diffStats(root: string | PinnedWorktree, from: string, to: string): Promise<ChangeStats> {
  const out = await runGit(["diff", "--numstat", "-z", "--no-renames", from, to], gitPlace(root));
  if (out.code !== 0) throw new Error(`git diff failed: ${out.stderr}`);
  const stats: ChangeStats = { files: 0, insertions: 0, deletions: 0 };
  for (const field of nulFields(out.stdout)) {
    const [added, deleted] = field.split("\t");
    stats.files++;
    stats.insertions += Number(added) || 0; // "-" for binary
    stats.deletions += Number(deleted) || 0;
  }
  return stats;
}

export interface CaptureOptions {
  /** The flow home, named in the kept commit's message (see flowHomeLine). */
  home?: string;
  /**
   * Where the flow home sits in the user's tree (see snapshot.ts): what the child wrote there is
   * left out, as the base leaves it out. An apply must never write pi-flow's own files.
   */
  flowHomeInTree?: string;
  /** Told the repositories the child made (or removed) inside its worktree, left out of the changes (see nestedRepositories). */
  onNestedRepositories?: (paths: string[]) => void;
  /** The most the kept changes may hold (KEPT_CHANGES_MAX; a test sets less): past it none are kept (kept-size.ts). */
  keptChangesMax?: KeptChangesMax;
  /** Told the submodules whose folder holds files the child wrote, which cannot be kept (see writesInSubmodules). */
  onSubmoduleWrites?: (paths: string[]) => void;
  /** Told the FIFOs and sockets removed from the worktree, and the files left out in folders git takes for git folders (special-files.ts). */
  onUnkeptFiles?: (unkept: { special: string[]; inGitFolders: string[] }) => void;
}

/**
 * The paths where the child's index holds another git repository (a folder with its own .git,
 * `git init` or a clone) that the base does not, or the other way round. git keeps such a folder as
 * a link to a commit of that repository, which the user's repository does not have: applied, it
 * would be an empty folder where the child's files were, reported as written.
 */
async function nestedRepositories(place: GitOptions, base: string): Promise<string[]> {
  const raw = await runGit(["diff-index", "--cached", "-z", "--no-renames", base], place);
  if (raw.code !== 0) throw new Error(`git diff-index failed: ${raw.stderr}`);
  const fields = nulFields(raw.stdout);
  const nested: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [srcMode, dstMode] = fields[i]!.slice(1).split(" ");
    if (srcMode === "160000" || dstMode === "160000") nested.push(fields[i + 1]!);
  }
  return nested;
}

/**
 * The submodules (gitlinks of the index) whose folder holds files the child wrote: a worktree does
 * not check submodules out, so such a folder starts empty, and `add -A` passes over what is written
 * in it. A folder with its own `.git` (a submodule the child checked out itself) is a repository of
 * its own, as nestedRepositories says.
 */
async function writesInSubmodules(worktree: PinnedWorktree, place: GitOptions): Promise<string[]> {
  const raw = await runGit(["ls-files", "-s", "-z"], place);
  if (raw.code !== 0) throw new Error(`git ls-files failed: ${raw.stderr}`);
  const written: string[] = [];
  for (const field of nulFields(raw.stdout)) {
    if (!field.startsWith("160000 ")) continue;
    const path = field.slice(field.indexOf("\t") + 1);
    const entries = await readdir(join(worktree.path, path)).catch((): string[] => []);
    if (entries.length > 0 && !entries.includes(".git")) written.push(path);
  }
  return written;
}

/**
 * Commits everything the child left in its worktree (ignored files aside) on top of `base`, and
 * points the run's ref at it in the shared repository. Null when the child changed nothing. A
 * repository the child made inside its worktree is left as the base has it, and named to
 * `onNestedRepositories`: its files cannot be kept, and the rest of the changes still are.
 */
export async function captureChanges(worktree: PinnedWorktree, base: string, runId: string, options: CaptureOptions = {}): Promise<{ commit: string; stats: ChangeStats } | null> {
  return await withPrivateIndex(worktree, base, (place) => captureThrough(place, worktree, base, runId, options));
}

async function captureThrough(place: GitOptions, worktree: PinnedWorktree, base: string, runId: string, options: CaptureOptions): Promise<{ commit: string; stats: ChangeStats } | null> {
  // First: git reading the tree's ignore rules would wait forever on a FIFO named .gitignore.
  const special = await removeSpecialFiles(worktree.path);
  const flowHome = await excludeFlowHome(worktree, options.flowHomeInTree);
  const baseBlobs = await treeBlobs(place, base);
  // The listing that measures the changes names those git would refuse to add, too.
  const inGitFolders = (await assertKeepable(place, baseBlobs, flowHome, options.keptChangesMax)).filter(inGitFolder);
  const pathspecs = [...flowHome, ...leftOut(inGitFolders)];
  if (special.length + inGitFolders.length > 0) options.onUnkeptFiles?.({ special, inGitFolders });
  const uncommitted = await addChildTree(place, base, pathspecs, false);
  const inSubmodules = await writesInSubmodules(worktree, place);
  if (inSubmodules.length > 0) options.onSubmoduleWrites?.(inSubmodules);
  const nested = await nestedRepositories(place, base);
  if (nested.length > 0) {
    // Literal pathspecs: a name the child chose is never read as a pattern.
    await git(["reset", "-q", base, "--pathspec-from-file=-", "--pathspec-file-nul"], { ...place, env: { ...place.env, GIT_LITERAL_PATHSPECS: "1" }, input: nested.map((path) => `${path}\0`).join("") });
  }
  if (nested.length + uncommitted.length > 0) options.onNestedRepositories?.([...uncommitted, ...nested].sort());
  const tree = await git(["write-tree"], place);
  if (tree === (await git(["rev-parse", `${base}^{tree}`], place))) return null;
  await assertTreeKeepable(place, baseBlobs, tree, options.keptChangesMax);
  const commit = await commitTree(worktree, tree, base, `pi-flow: changes of run ${runId}${options.home === undefined ? "" : `\n\n${flowHomeLine(options.home)}`}`);
  await git(["update-ref", changesRef(runId), commit], place);
  return { commit, stats: await diffStats(worktree, base, commit) };
}

/** The run's kept changes: its commit and the base it was made from, or null when it has none. */
export async function readChanges(root: string, runId: string): Promise<{ commit: string; base: string } | null> {
  const out = await runGit(["rev-parse", `${changesRef(runId)}^{commit}`, `${changesRef(runId)}^1`], { cwd: root });
  if (out.code !== 0) return null;
  const [commit, base] = out.stdout.toString("utf8").trim().split("\n");
  return commit && base ? { commit, base } : null;
}

/**
 * The most of a patch the patch view keeps: a child that wrote gigabytes (a dataset, a disk image)
 * must not have them read into the host's memory and redacted, only to be shown as a note.
 */
export const MAX_PATCH_VIEW_BYTES = 32 * 1024 * 1024;

/** A size as a person reads it: whole MiB, or KiB below that. */
const shownSize = (bytes: number): string => (bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${Math.round(bytes / 1024)} KiB`);

/** The run's changes as a git patch (binary files as git binary patches); an Error when it is over `maxBytes`. */
export async function patchText(root: string, base: string, commit: string, maxBytes = MAX_PATCH_VIEW_BYTES): Promise<string> {
  const out = await runGit(["diff", "--binary", ...PATCH_OPTIONS, "--find-renames", base, commit], { cwd: root, maxStdoutBytes: maxBytes });
  if (out.overflowed) throw new Error(`it is over ${shownSize(maxBytes)}`);
  if (out.code !== 0) throw new Error(`git diff failed: ${out.stderr}`);
  return out.stdout.toString("utf8");
}

export async function dropChanges(root: string, runId: string): Promise<void> {
  await runGit(["update-ref", "-d", changesRef(runId)], { cwd: root });
}
