// The programs a repository's own config makes git run in the commands pi-flow runs: filter drivers
// (`filter.<name>.clean`, `smudge`, `process`: run by `git add`, `worktree add`, `checkout-index`,
// `apply`) and merge drivers (`merge.<name>.driver`: run by `merge-tree`), named for files by any
// attributes file, `.git/info/attributes` included. Every worktree shares that config and that
// folder, so a worktree child's bash can define such a driver, and pi-flow's own git (keeping its
// changes, making a sibling's worktree, an apply) would run it. Drivers the repository's config
// (local or worktree scope, and what it includes) defines are overridden for pi-flow's git with the
// user's own (global or system) definition, or made inert; the user's own drivers (git-lfs, as
// `git lfs install` sets it up) run as git would run them (docs/isolation.md).
import { join } from "node:path";

/**
 * The config keys that name a program (or make a missing one fatal), for `git config --get-regexp`;
 * and `core.attributesFile`, which names an attributes file anywhere, and so which of the user's own
 * drivers run for which files.
 */
export const PROGRAM_KEYS = "^(filter\\..+\\.(clean|smudge|process|required)|merge\\..+\\.driver|core\\.attributesfile)$";

const ATTRIBUTES_FILE = "core.attributesfile";

/** The attributes file git reads when no config names one: `$XDG_CONFIG_HOME/git/attributes`, or `~/.config/git/attributes`. */
function defaultAttributesFile(): string {
  const xdg = process.env.XDG_CONFIG_HOME;
  if (xdg) return join(xdg, "git", "attributes");
  return process.env.HOME ? join(process.env.HOME, ".config", "git", "attributes") : "/dev/null";
}

/** A merge driver git itself provides: a repository's own driver is replaced by git's text merge. */
const TEXT_MERGE = "git merge-file --marker-size=%L %A %O %B";

/** The config scopes a worktree child can write: the repository's own. */
const REPOSITORY_SCOPES = new Set(["local", "worktree"]);

/** What a driver key becomes when only the repository's config defines it. */
function inert(key: string): string {
  if (key === ATTRIBUTES_FILE) return defaultAttributesFile(); // as if the repository's config named none
  if (key.endsWith(".required")) return "false"; // an emptied filter must not fail the command
  if (key.endsWith(".driver")) return TEXT_MERGE;
  return ""; // an empty clean, smudge or process: git runs no filter
}

/**
 * The overrides (key, value) of each program key the repository's config sets, from the output of
 * `git config -z --includes --show-scope --get-regexp PROGRAM_KEYS` (scope NUL key LF value NUL).
 */
export function programOverrides(listing: Buffer): [string, string][] {
  const fields = listing.toString("utf8").split("\0");
  const inRepository = new Set<string>();
  const userValue = new Map<string, string>();
  const commanded = new Set<string>();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const scope = fields[i]!;
    const entry = fields[i + 1]!;
    const newline = entry.indexOf("\n");
    const key = newline === -1 ? entry : entry.slice(0, newline);
    const value = newline === -1 ? "true" : entry.slice(newline + 1);
    if (REPOSITORY_SCOPES.has(scope)) inRepository.add(key);
    else if (scope === "command") commanded.add(key); // set by pi-flow's caller with -c: it wins already
    else userValue.set(key, value); // system, then global: the last one is git's
  }
  return [...inRepository].filter((key) => !commanded.has(key)).map((key) => [key, userValue.get(key) ?? inert(key)]);
}

/**
 * `env` with `overrides` added as GIT_CONFIG_COUNT/KEY_n/VALUE_n entries after any it holds: not
 * `-c key=value`, which splits at the first "=" that a driver's name may hold.
 */
export function withConfigEntries(env: NodeJS.ProcessEnv, overrides: readonly [string, string][]): NodeJS.ProcessEnv {
  if (overrides.length === 0) return env;
  const count = Number.parseInt(env.GIT_CONFIG_COUNT ?? "0", 10) || 0;
  const added: NodeJS.ProcessEnv = { GIT_CONFIG_COUNT: String(count + overrides.length) };
  overrides.forEach(([key, value], index) => {
    added[`GIT_CONFIG_KEY_${count + index}`] = key;
    added[`GIT_CONFIG_VALUE_${count + index}`] = value;
  });
  return { ...env, ...added };
}

/**
 * Whether `git ls-files args` reads a file's contents: only to tell a modified, deleted or killed
 * file (`-m`, `-d`, `-k`, alone or in a cluster such as `-md`, a racily clean one is hashed, through
 * its clean filter) or its line endings (`--eol`). Listing the index or untracked files reads none.
 */
function listingReadsFiles(args: readonly string[]): boolean {
  return args.some((arg) => /^-[a-zA-Z]*[mdk]/.test(arg) || /^--(modified|deleted|killed|eol)$/.test(arg));
}

/** Whether git command `args` can run a filter or merge driver (see RUNS_NO_DRIVER). */
export function mayRunDriver(args: readonly string[]): boolean {
  const command = args[0] ?? "";
  if (command === "ls-files") return listingReadsFiles(args.slice(1));
  return !RUNS_NO_DRIVER.has(command);
}

/**
 * git commands that read no file of a working tree, so run no filter or merge driver: no need to
 * look. (`write-tree` is not one: it reads a racily clean file to tell whether it changed.)
 */
export const RUNS_NO_DRIVER = new Set([
  "rev-parse",
  "update-ref",
  "ls-tree",
  "diff-tree",
  "for-each-ref",
  "rev-list",
  "merge-base",
  "log",
  "commit-tree",
  "config",
  "show-ref",
  "symbolic-ref",
]);
