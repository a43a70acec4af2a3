// Applying a run's kept changes onto the user's working tree: a 3-way merge against the run's base,
// written into the working tree only when it is clean, all or nothing. The user's index, HEAD and
// refs are untouched, and their own uncommitted edits are merged with, never lost or staged.
import { lstat, readdir, rmdir, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { changesRef, flowHomeLine, readChanges, type ChangeStats } from "./changes.ts";
import { checkoutWithUserAttributes } from "./checkout.ts";
import { linksIntoGitFolder, uncheckable, type LinkEntry } from "./git-folder-links.ts";
import { nulFields, runGit } from "./git.ts";
import type { Repository } from "./repository.ts";
import { changedSince, commitTree, flowHomeInTree, workingTreeId } from "./snapshot.ts";

export type ApplyOutcome =
  | { status: "applied"; files: string[] }
  | { status: "conflict"; files: string[]; reason?: string }
  | { status: "nothing_to_apply" };

/** Whether a folder on the way from `root` to `path` is a symbolic link or no folder at all: nothing is deleted through one. */
export async function throughLink(root: string, path: string): Promise<boolean> {
  let at = root;
  for (const part of path.split("/").slice(0, -1)) {
    at = join(at, part);
    const stats = await lstat(at).catch(() => null);
    if (!stats?.isDirectory()) return true; // lstat: a link to a folder is a link, not a folder
  }
  return false;
}

/** The paths that differ between two trees: those `to` holds (and which of them are links), and those only `from` held. */
async function changedPaths(root: string, from: string, to: string): Promise<{ written: string[]; deleted: string[]; links: LinkEntry[]; notUtf8: string[] }> {
  const raw = await runGit(["diff-tree", "-r", "-z", "--no-renames", from, to], { cwd: root });
  if (raw.code !== 0) throw new Error(`git diff-tree failed: ${raw.stderr}`);
  const fields = nulFields(raw.stdout);
  const written: string[] = [];
  const deleted: string[] = [];
  const links: LinkEntry[] = [];
  // Read as text, such a name holds U+FFFD where its bytes were, and names no file git knows.
  const notUtf8 = notUtf8Names(raw.stdout);
  // Pairs of ":<old mode> <new mode> <old id> <new id> <status>" and the path.
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [, mode = "", , id = "", status = ""] = fields[i]!.slice(1).split(" ");
    const path = fields[i + 1]!;
    if (status === "D") deleted.push(path);
    else written.push(path);
    if (status !== "D" && mode === "120000") links.push({ path, id });
  }
  return { written, deleted, links, notUtf8 };
}

/** The fields of NUL-separated `bytes` that are not UTF-8, as text (U+FFFD in place of their bytes). */
function notUtf8Names(bytes: Buffer): string[] {
  const names: string[] = [];
  for (let start = 0, end = bytes.indexOf(0); end !== -1; start = end + 1, end = bytes.indexOf(0, start)) {
    const field = bytes.subarray(start, end);
    const text = field.toString("utf8");
    if (!Buffer.from(text, "utf8").equals(field)) names.push(text);
  }
  return names;
}

/**
 * The paths of `written` that would overwrite something the user's tree as captured does not hold:
 * a file git ignores (a child that un-ignored `.env` and wrote one), or an ignored folder or file
 * where the merge puts a file or a folder. checkout-index -f would replace it, folders whole.
 * Only what the merge deletes anyway may stand in the way.
 */
async function inTheWay(root: string, currentTree: string, written: readonly string[], deleted: readonly string[]): Promise<string[]> {
  const listed = await runGit(["ls-tree", "-r", "-z", "--name-only", currentTree], { cwd: root });
  if (listed.code !== 0) throw new Error(`git ls-tree failed: ${listed.stderr}`);
  const held = new Set(nulFields(listed.stdout));
  const going = new Set(deleted);
  // A folder in the way holds only files the merge deletes, or it is the user's.
  const onlyGoing = async (dir: string): Promise<boolean> => {
    for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory() ? !(await onlyGoing(path)) : !going.has(path)) return false;
    }
    return true;
  };
  const blocked: string[] = [];
  for (const path of written) {
    if (held.has(path)) continue;
    const parts = path.split("/");
    let stuck = false;
    for (let i = 1; i <= parts.length && !stuck; i++) {
      const at = parts.slice(0, i).join("/");
      const stats = await lstat(join(root, at)).catch(() => null);
      if (!stats) break; // nothing there, nor below
      if (stats.isDirectory()) stuck = i === parts.length && !(await onlyGoing(at));
      else stuck = !held.has(at); // a file or link where the merge needs a folder: the user's unless tracked
    }
    if (stuck) blocked.push(path);
  }
  return blocked;
}

/**
 * On a file system that takes `A.txt` and `a.txt` for one file (git's core.ignorecase: macOS,
 * Windows), the written paths of the merged `tree` whose name differs only in case from another of
 * its paths: writing one would overwrite the other, the user's file, with no merge. A child that ran
 * elsewhere (a fleet worker on Linux, a cassette's changes) can keep both names.
 */
async function caseClashes(root: string, tree: string, written: readonly string[]): Promise<string[]> {
  const setting = await runGit(["config", "--bool", "core.ignorecase"], { cwd: root });
  if (setting.stdout.toString("utf8").trim() !== "true") return [];
  const listed = await runGit(["ls-tree", "-r", "-z", "--name-only", tree], { cwd: root });
  if (listed.code !== 0) throw new Error(`git ls-tree failed: ${listed.stderr}`);
  const byFold = new Map<string, number>();
  for (const path of nulFields(listed.stdout)) byFold.set(path.toLowerCase(), (byFold.get(path.toLowerCase()) ?? 0) + 1);
  return written.filter((path) => (byFold.get(path.toLowerCase()) ?? 0) > 1);
}

/** The paths of the merge at or under the flow home: an apply never writes or deletes pi-flow's own files. */
function intoFlowHome(root: string, flowHome: string | undefined, paths: readonly string[]): string[] {
  const inside = flowHomeInTree(root, flowHome);
  return inside === undefined ? [] : paths.filter((path) => path === inside || path.startsWith(`${inside}/`));
}

/**
 * The folders the deletions left empty, as git's own checkout removes them: a child that deleted a
 * folder's files leaves no empty folder standing for it. Only empty ones (rmdir), never through a link.
 */
export async function removeEmptiedFolders(root: string, deleted: readonly string[]): Promise<void> {
  const folders = new Set<string>();
  for (const path of deleted) for (let dir = dirname(path); dir !== "."; dir = dirname(dir)) folders.add(dir);
  // Deepest first, so a parent is tried once its emptied children are gone.
  for (const dir of [...folders].sort((a, b) => b.split("/").length - a.split("/").length)) {
    if (await throughLink(root, `${dir}/.`)) continue;
    await rmdir(join(root, dir)).catch(() => undefined); // not empty: the user's or the merge's files stay
  }
}

export interface ApplyOptions {
  /** The flow home of the run: left out of the user's tree as captured, and never written into. */
  flowHome?: string;
  /**
   * Called before the first file is touched, with every file the apply is about to write or
   * delete and the commit of the user's tree as it is now (made by the apply, parent the run's
   * base). The apply may still end in a conflict after it, writing nothing.
   */
  beforeWriting?: (files: string[], before: string) => Promise<void>;
}

/**
 * The conflicted paths `git merge-tree --write-tree --name-only -z` lists after the tree ID. A file
 * where the other side has a folder is listed as git's renamed copy, `<path>~<commit>` (one of the
 * two merged commits): named by its path, the one the user has.
 */
function conflictedFiles(stdout: Buffer, commits: readonly string[]): string[] {
  const text = stdout.toString("utf8");
  const end = text.indexOf("\0\0");
  const head = nulFields(Buffer.from(end >= 0 ? text.slice(0, end) : text));
  const path = (name: string) => commits.reduce((shown, commit) => (shown.endsWith(`~${commit}`) ? shown.slice(0, -commit.length - 1) : shown), name);
  return [...new Set(head.slice(1).map(path))].sort();
}

/**
 * Merges the run's changes (base → commit) onto the working tree as it is now. Clean: the changed
 * files are written and listed. Conflict: nothing is written, the conflicting files are listed.
 */
export async function applyChanges(repo: Repository, runId: string, options: ApplyOptions = {}): Promise<ApplyOutcome> {
  const changes = await readChanges(repo.root, runId);
  if (!changes) return { status: "nothing_to_apply" };
  const currentTree = await workingTreeId(repo, options.flowHome);
  // The user's tree as a child of the run's base, so that base is the merge base of the two sides.
  // Named like a run's kept changes: crash cleanup of another flow home leaves it alone (see flowHomeLine).
  const message = `pi-flow: the working tree before apply${options.flowHome === undefined ? "" : `\n\n${flowHomeLine(options.flowHome)}`}`;
  const current = await commitTree(repo.root, currentTree, changes.base, message);
  const merged = await runGit(["merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", current, changes.commit], { cwd: repo.root });
  if (merged.code === 1) return { status: "conflict", files: conflictedFiles(merged.stdout, [current, changes.commit]) };
  if (merged.code !== 0) throw new Error(`git merge-tree failed: ${merged.stderr}`);
  const tree = nulFields(merged.stdout)[0]!;
  const { written, deleted, links, notUtf8 } = await changedPaths(repo.root, currentTree, tree);
  // Not a conflict git found: each kind says why, so nobody tries to merge it by hand.
  const refusals: [string[], string][] = [
    [intoFlowHome(repo.root, options.flowHome, [...written, ...deleted]), "files in the flow home inside the working tree (pi-flow's own), which an apply never writes"],
    [await inTheWay(repo.root, currentTree, written, deleted), "files or folders git ignores in the working tree (the user's own) in the way, which an apply never overwrites"],
    [await linksIntoGitFolder(repo.root, repo.commonDir, links), "links into a git folder (.git), which an apply never writes"],
    [[...written, ...deleted].filter(uncheckable), "paths inside a .git folder or through .. (put in the child's index by hand), which git never checks out and an apply never writes"],
    [notUtf8, `names that are not UTF-8 (shown with U+FFFD), which pi-flow cannot name to git: git checkout ${changesRef(runId)} -- <path> takes one from the kept changes`],
    [await caseClashes(repo.root, tree, written), "names that differ only in case from other files, which this repository's file system takes for the same file (core.ignorecase): one would overwrite the other"],
  ];
  const blocked = refusals.filter(([paths]) => paths.length > 0);
  if (blocked.length > 0) return { status: "conflict", files: [...new Set(blocked.flatMap(([paths]) => paths))].sort(), reason: blocked.map(([, why]) => why).join("; ") };
  const files = [...written, ...deleted].sort();
  await options.beforeWriting?.(files, current);
  // The merge took a while: a file the user saved meanwhile (an editor, a formatter) would be
  // overwritten with the merge of its older text. Those files are read again just before writing.
  const since = await changedSince(repo, currentTree, files);
  if (since.length > 0) return { status: "conflict", files: since };
  // Writes first, so a write git refuses leaves the tree as it was; then the deletions, none through
  // a link: a change that turns a folder into a link (dir/ → /elsewhere) has just written that link,
  // and dir/x must not be deleted through it. (Its old files there are gone with the folder.)
  await checkoutWithUserAttributes(repo.root, tree, currentTree, written);
  for (const path of deleted) if (!(await throughLink(repo.root, path))) await unlink(join(repo.root, path)).catch(() => undefined);
  await removeEmptiedFolders(repo.root, deleted);
  return { status: "applied", files };
}

export type { ChangeStats };
