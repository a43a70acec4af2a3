// A child can leave gigabytes, or millions of files, in its worktree (a dataset, a disk image, an
// un-ignored node_modules, a loop gone wrong): `git add -A` would copy every byte into the user's
// object store, and an apply would write them all into their checkout. So before adding, what add
// -A would take is measured, reading no file's contents (git reads none to list, so no filter
// runs): past the cap nothing is kept, and the run names what was left (docs/isolation.md, "Ref").
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { nulFields, runGit, type GitOptions } from "./git.ts";
import { shownName } from "./change-record.ts";
import { ChangesNotKept } from "./replaced-worktree.ts";

/** The most a child's kept changes may hold: bytes of files added or changed, and how many. */
export interface KeptChangesMax {
  bytes: number;
  files: number;
}

/** 1 GiB, 100,000 files: far more than any edit a person reviews, far less than fills a disk. */
export const KEPT_CHANGES_MAX: KeptChangesMax = { bytes: 1024 ** 3, files: 100_000 };

/** The most of the listing of the worktree's files read (its index's and the untracked): a million paths of 64 bytes; past it, too many. */
const LISTING_MAX_BYTES = 64 * 1024 * 1024;

/** How many lstat calls are in flight at once. */
const STATED_AT_ONCE = 256;

interface Tally {
  bytes: number;
  files: number;
  /** By top folder (or file): what the message names, the largest first. */
  byTop: Map<string, { bytes: number; files: number }>;
}

const shownBytes = (bytes: number): string =>
  bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GiB` : bytes >= 1024 ** 2 ? `${(bytes / 1024 ** 2).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;

function count(tally: Tally, path: string, bytes: number): void {
  tally.bytes += bytes;
  tally.files += 1;
  const slash = path.indexOf("/");
  const top = slash === -1 ? path : `${path.slice(0, slash)}/`;
  const entry = tally.byTop.get(top) ?? { bytes: 0, files: 0 };
  entry.bytes += bytes;
  entry.files += 1;
  tally.byTop.set(top, entry);
}

/** A tree's files (blobs and links) by path, with their IDs and sizes. */
export type TreeBlobs = ReadonlyMap<string, { id: string; size: number }>;

/** The files of `treeish`: `ls-tree -l` reads no file of a worktree, only the objects' headers. */
export async function treeBlobs(place: GitOptions, treeish: string): Promise<TreeBlobs> {
  const listed = await runGit(["ls-tree", "-r", "-l", "-z", treeish], place);
  if (listed.code !== 0) throw new Error(`git ls-tree failed: ${listed.stderr}`);
  const blobs = new Map<string, { id: string; size: number }>();
  for (const line of nulFields(listed.stdout)) {
    const tab = line.indexOf("\t");
    const [, type, id = "", size = ""] = line.slice(0, tab).split(" ").filter(Boolean);
    if (type === "blob") blobs.set(line.slice(tab + 1), { id, size: Number(size) });
  }
  return blobs;
}

/**
 * ChangesNotKept (changes_too_large) when the files `git add -A -- :/ ...pathspecs` would add or
 * change in the child's worktree (its index in `place`; `base`: its base's files) are over `max`:
 * new ones (untracked and not ignored, or added despite .gitignore) and those whose size differs from the base's.
 * Returns every path it listed (the index's and the untracked), for the caller's other checks.
 */
export async function assertKeepable(place: GitOptions, base: TreeBlobs, pathspecs: readonly string[], max: KeptChangesMax = KEPT_CHANGES_MAX): Promise<string[]> {
  const tally: Tally = { bytes: 0, files: 0, byTop: new Map() };
  // The index lists the base's files too: a repository's own size is no reason to refuse.
  const out = await runGit(["ls-files", "-z", "-c", "-o", "--exclude-standard", "--", ":/", ...pathspecs], { ...place, maxStdoutBytes: LISTING_MAX_BYTES });
  if (out.overflowed) throw tooLarge(max, tally, "more files than pi-flow lists");
  if (out.code !== 0) throw new Error(`git ls-files failed: ${out.stderr}`);
  const candidates = [...new Set(nulFields(out.stdout))];
  for (let i = 0; i < candidates.length; i += STATED_AT_ONCE) {
    const batch = candidates.slice(i, i + STATED_AT_ONCE);
    const stats = await Promise.all(batch.map((path) => lstat(join(place.cwd, path)).catch(() => null)));
    batch.forEach((path, j) => {
      const info = stats[j];
      // A folder listed is a repository of its own (kept as a link at most); a link's size is its target's length.
      if (!info || info.isDirectory() || base.get(path)?.size === info.size) return;
      count(tally, path, info.size);
    });
    if (tally.files > max.files || tally.bytes > max.bytes) throw tooLarge(max, tally);
  }
  return candidates;
}

/**
 * The same cap, on the tree about to be kept (before its ref is written): an entry the child's own
 * git staged and hid from the disk (skip-worktree, then deleted) is kept with no file to measure.
 * Counts the blobs `tree` adds or changes over `base`, by the sizes their objects hold.
 */
export async function assertTreeKeepable(place: GitOptions, base: TreeBlobs, tree: string, max: KeptChangesMax = KEPT_CHANGES_MAX): Promise<void> {
  const tally: Tally = { bytes: 0, files: 0, byTop: new Map() };
  for (const [path, { id, size }] of await treeBlobs(place, tree)) if (base.get(path)?.id !== id) count(tally, path, size);
  if (tally.files > max.files || tally.bytes > max.bytes) throw tooLarge(max, tally);
}

function tooLarge(max: KeptChangesMax, tally: Tally, listing?: string): ChangesNotKept {
  const largest = [...tally.byTop.entries()].sort((a, b) => b[1].bytes - a[1].bytes || b[1].files - a[1].files).slice(0, 5);
  const named = largest.map(([top, { bytes, files }]) => `${shownName(top)} (${shownBytes(bytes)}${files > 1 ? ` in ${files} files` : ""})`).join(", ");
  const found = listing ?? `at least ${shownBytes(tally.bytes)} in ${tally.files} new or changed files`;
  return new ChangesNotKept(
    "changes_too_large",
    `the child left ${found} in its worktree, over the most pi-flow keeps of one child (${shownBytes(max.bytes)} or ${max.files} files): none of its changes are kept${named === "" ? "" : `. The largest: ${named}`}. A child that has to produce that much should write it outside the repository, or to a path .gitignore ignores; flow.isolation.maxKeptBytes and maxKeptFiles in Pi's settings raise the cap`,
  );
}
