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

/** Untracked paths are listed at most this long on average before the listing alone counts as too many files. */
const LISTED_BYTES_PER_FILE = 1024;

/** The most of the index's listing read (a child's bash can force-add files without bound): 4 million paths of 64 bytes. */
const TRACKED_LISTING_MAX_BYTES = 256 * 1024 * 1024;

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

/** Files listed by `git ls-files args`, or null when the listing alone is over `maxBytes`. */
async function listed(place: GitOptions, args: readonly string[], maxBytes: number): Promise<string[] | null> {
  const out = await runGit(["ls-files", "-z", ...args], { ...place, maxStdoutBytes: maxBytes });
  if (out.overflowed) return null;
  if (out.code !== 0) throw new Error(`git ls-files failed: ${out.stderr}`);
  return nulFields(out.stdout);
}

/**
 * ChangesNotKept (changes_too_large) when the files `git add -A -- :/ ...pathspecs` would add or
 * change in the child's worktree (made from `base`, its index in `place`) are over `max`: new ones
 * (untracked and not ignored, or added despite .gitignore) and those whose size differs from the base's.
 */
export async function assertKeepable(place: GitOptions, base: string, pathspecs: readonly string[], max: KeptChangesMax = KEPT_CHANGES_MAX): Promise<void> {
  const tally: Tally = { bytes: 0, files: 0, byTop: new Map() };
  const untracked = await listed(place, ["-o", "--exclude-standard", "--", ":/", ...pathspecs], Math.max(max.files, 1) * LISTED_BYTES_PER_FILE);
  // The index lists the base's files too: a repository's own size is no reason to refuse.
  const tracked = await listed(place, ["-c", "--", ":/", ...pathspecs], TRACKED_LISTING_MAX_BYTES);
  if (untracked === null || tracked === null) throw tooLarge(max, tally, "more files than pi-flow lists");
  const baseSizes = new Map<string, number>();
  const tree = await runGit(["ls-tree", "-r", "-l", "-z", base], place);
  if (tree.code !== 0) throw new Error(`git ls-tree failed: ${tree.stderr}`);
  for (const line of nulFields(tree.stdout)) {
    const tab = line.indexOf("\t");
    const size = Number(line.slice(0, tab).split(" ").filter(Boolean)[3]);
    if (Number.isFinite(size)) baseSizes.set(line.slice(tab + 1), size);
  }
  const candidates = [...new Set([...untracked, ...tracked])];
  for (let i = 0; i < candidates.length; i += STATED_AT_ONCE) {
    const batch = candidates.slice(i, i + STATED_AT_ONCE);
    const stats = await Promise.all(batch.map((path) => lstat(join(place.cwd, path)).catch(() => null)));
    batch.forEach((path, j) => {
      const info = stats[j];
      // A folder listed is a repository of its own (kept as a link at most); a link's size is its target's length.
      if (!info || info.isDirectory() || baseSizes.get(path) === info.size) return;
      count(tally, path, info.size);
    });
    if (tally.files > max.files || tally.bytes > max.bytes) throw tooLarge(max, tally);
  }
}

/**
 * The same cap, on the tree about to be kept (before its ref is written): an entry the child's own
 * git staged and hid from the disk (skip-worktree, then deleted) is kept with no file to measure.
 * Reads only the sizes of the blobs `tree` adds or changes over `base`.
 */
export async function assertTreeKeepable(place: GitOptions, base: string, tree: string, max: KeptChangesMax = KEPT_CHANGES_MAX): Promise<void> {
  const diff = await runGit(["diff-tree", "-r", "-z", "--no-renames", base, tree], place);
  if (diff.code !== 0) throw new Error(`git diff-tree failed: ${diff.stderr}`);
  const fields = nulFields(diff.stdout);
  const added: { path: string; id: string }[] = [];
  // Pairs of ":<old mode> <new mode> <old id> <new id> <status>" and the path; a gitlink has no blob.
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [, mode = "", , id = "", status = ""] = fields[i]!.slice(1).split(" ");
    if (status !== "D" && mode !== "160000") added.push({ path: fields[i + 1]!, id });
  }
  const tally: Tally = { bytes: 0, files: 0, byTop: new Map() };
  if (added.length > max.files) {
    for (const { path } of added) count(tally, path, 0);
    throw tooLarge(max, tally);
  }
  const sizes = await runGit(["cat-file", "--batch-check=%(objectsize)"], { ...place, input: added.map(({ id }) => `${id}\n`).join("") });
  if (sizes.code !== 0) throw new Error(`git cat-file failed: ${sizes.stderr}`);
  const each = sizes.stdout.toString("utf8").split("\n");
  added.forEach(({ path }, i) => count(tally, path, Number(each[i]) || 0));
  if (tally.bytes > max.bytes) throw tooLarge(max, tally);
}

function tooLarge(max: KeptChangesMax, tally: Tally, listing?: string): ChangesNotKept {
  const largest = [...tally.byTop.entries()].sort((a, b) => b[1].bytes - a[1].bytes || b[1].files - a[1].files).slice(0, 5);
  const named = largest.map(([top, { bytes, files }]) => `${shownName(top)} (${shownBytes(bytes)}${files > 1 ? ` in ${files} files` : ""})`).join(", ");
  const found = listing ?? `at least ${shownBytes(tally.bytes)} in ${tally.files} new or changed files`;
  return new ChangesNotKept(
    "changes_too_large",
    `the child left ${found} in its worktree, over the most pi-flow keeps of one child (${shownBytes(max.bytes)} or ${max.files} files): none of its changes are kept, and its worktree is removed with them${named === "" ? "" : `. The largest: ${named}`}. A child that has to produce that much should write it outside the repository, or to a path .gitignore ignores`,
  );
}
