// The files of a repository's git folder that make git run programs: its config (core.fsmonitor,
// core.hooksPath, aliases, filter and diff drivers), its hooks and its info/attributes. Every
// worktree shares them, so a worktree child's bash (`git config core.fsmonitor …`, a file written
// into hooks/) changes them for the user's own checkout: apply's review never sees it, as it is no
// file of the tree. Taken when the child's worktree is made and again when it settles; what differs
// is named in the child's run (docs/isolation.md).
import { createHash } from "node:crypto";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { readPlainFile } from "./plain-file.ts";

/** Each watched file's fingerprint, by its path in the git folder; an absent file has none. */
export type GitControls = ReadonlyMap<string, string>;

/** Also alternates: a child's line there has the user's git read objects from a folder of its choosing, and depend on it. */
const READ_FILES = ["config", "info/attributes", "objects/info/alternates"];
const HOOKS = "hooks";
/** Git ships 14 sample hooks: past this many, the folder is fingerprinted by its count alone. */
const HOOKS_STATED_MAX = 256;

/** Files up to this size are fingerprinted by their contents; a larger one (a child can grow the config) by size and time, unread. */
const HASHED_MAX_BYTES = 1024 * 1024;

/** The files' contents' hashes, and each hook's size, time and mode (a hook is any program). */
export async function gitControls(commonDir: string): Promise<GitControls> {
  const controls = new Map<string, string>();
  for (const name of READ_FILES) {
    const path = join(commonDir, name);
    const info = await stat(path, { bigint: true }).catch(() => null);
    if (!info) continue;
    // Only a file is read: a FIFO put in its place would keep the read (and the settle) waiting forever.
    const text = info.isFile() && info.size <= HASHED_MAX_BYTES ? await readPlainFile(path, { maxBytes: HASHED_MAX_BYTES }) : null;
    controls.set(name, text ? createHash("sha256").update(text).digest("hex") : `${info.size}:${info.mtimeNs}:${info.mode}`);
  }
  const hooks = await readdir(join(commonDir, HOOKS)).catch(() => [] as string[]);
  if (hooks.length > HOOKS_STATED_MAX) {
    // A folder a child filled with files: named as one entry, by its count, not stated file by file.
    controls.set(`${HOOKS}/`, `${hooks.length} files`);
    return controls;
  }
  for (const hook of hooks) {
    const info = await stat(join(commonDir, HOOKS, hook), { bigint: true }).catch(() => null);
    if (info) controls.set(`${HOOKS}/${hook}`, `${info.size}:${info.mtimeNs}:${info.mode}`);
  }
  return controls;
}

/** The watched files that were added, changed or removed between `before` and `after`, sorted. */
export function changedControls(before: GitControls, after: GitControls): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((name) => before.get(name) !== after.get(name)).sort();
}
