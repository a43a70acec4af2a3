// The files every git pi-flow runs opens before it does anything: the repository's config, HEAD,
// packed-refs, index, attributes and excludes, and the user's own config files. A worktree child's
// bash can reach them (every worktree shares the repository's git folder), and one replaced with a
// FIFO makes git wait in open() for a writer forever, so pi-flow's own git (a settle, an apply, a
// sibling's worktree) and the user's session with it would never finish. Each is checked before
// git runs: present, it must be a file (or a link to one). Anything else git would wait on or
// read without end (a FIFO, a socket, a device) is refused, naming it, and so is one a config names
// (an include, core.excludesFile) (docs/isolation.md).
import { realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { readPlainFile } from "./plain-file.ts";

/** The files of the repository's common git folder git may open for any command. */
const COMMON_FILES = ["config", "config.worktree", "HEAD", "packed-refs", "shallow", "info/attributes", "info/exclude", "info/grafts", "info/sparse-checkout", "objects/info/alternates", "logs/refs/stash"];
/** The files of a worktree's own git folder (a linked worktree's `worktrees/<id>`) git may open. */
const OWN_FILES = ["HEAD", "index", "config.worktree", "commondir", "info/sparse-checkout", "logs/HEAD"];

/** A `.git` file or `commondir` file holds one path: anything larger is not one, and is not read. */
const POINTER_MAX_BYTES = 64 * 1024;

/** git cannot be run safely: one of the files it opens is no file. */
export class GitFileUnreadable extends FlowError {
  readonly file: string;
  constructor(file: string, kind: string) {
    super(
      "run_unavailable",
      `git cannot be run in this repository: ${JSON.stringify(file)} is ${kind}, not a file, and git would wait on it (or read it) without end. Every worktree shares the repository's git folder, so a worktree child's bash can put one there; remove it (or put back the file it replaced) and try again.`,
    );
    this.name = "GitFileUnreadable";
    this.file = file;
  }
}

/** What a file that is none is, for a message; undefined for a file, folder or link. */
export const kindOf = (info: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string | undefined => {
  if (info.isFIFO()) return "a FIFO";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  return undefined;
};

/** Refuses `path` when it is there and is neither a file nor a folder (links followed, as git follows them). */
async function assertReadable(path: string): Promise<void> {
  const info = await stat(path).catch(() => null); // stat opens nothing: a FIFO is never waited on here
  const kind = info ? kindOf(info) : undefined;
  if (kind) throw new GitFileUnreadable(path, kind);
}

/** The path a small pointer file (`.git`, `commondir`) holds, read only when it is a plain file. */
async function pointer(path: string, prefix: string): Promise<string | undefined> {
  await assertReadable(path);
  const info = await stat(path).catch(() => null);
  if (!info?.isFile() || info.size > POINTER_MAX_BYTES) return undefined;
  const text = ((await readPlainFile(path, { maxBytes: POINTER_MAX_BYTES }))?.toString("utf8") ?? "").trim();
  if (!text.startsWith(prefix)) return undefined;
  const named = text.slice(prefix.length).trim();
  return named === "" ? undefined : isAbsolute(named) ? named : resolve(dirname(path), named);
}

/** The git folder git finds from `cwd` (the nearest `.git` folder, or the folder a `.git` file names), or undefined. */
async function foundGitDir(cwd: string): Promise<string | undefined> {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const dotGit = join(dir, ".git");
    const info = await stat(dotGit).catch(() => null);
    if (info?.isDirectory()) return dotGit;
    if (info) return await pointer(dotGit, "gitdir:");
    if (dirname(dir) === dir) return undefined;
  }
}

/** A config file is read for the files it names only up to this size; past it (a child grew it) the time limit is the guard. */
const CONFIG_READ_MAX_BYTES = 1024 * 1024;
/** git follows includes at most this deep (its own limit is 10). */
const INCLUDE_DEPTH_MAX = 10;

/** The value of a config line `key = value`: quotes dropped, a comment after it cut. */
function configValue(raw: string): string {
  let value = "";
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const char = raw[i]!;
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === "#" || char === ";")) break;
    else if (char === "\\" && i + 1 < raw.length) value += raw[++i];
    else value += char;
  }
  return value.trim();
}

/**
 * The files a config file names that git opens whenever it reads the config: `include.path` and
 * `includeIf.<condition>.path` (read in turn, for theirs), `core.excludesFile`, `core.attributesFile`.
 * A FIFO named there waits git forever as one in the git folder does.
 */
async function namedFiles(config: string, home: string, depth = 0): Promise<string[]> {
  const info = await stat(config).catch(() => null);
  if (!info?.isFile() || info.size > CONFIG_READ_MAX_BYTES || depth > INCLUDE_DEPTH_MAX) return [];
  const text = (await readPlainFile(config, { maxBytes: CONFIG_READ_MAX_BYTES }))?.toString("utf8") ?? "";
  const named: string[] = [];
  let section = "";
  for (const line of text.split("\n")) {
    const header = /^\s*\[\s*([^\]\s"]+)/.exec(line);
    if (header) section = header[1]!.toLowerCase();
    const entry = /^\s*(?:\[[^\]]*\]\s*)?([A-Za-z][\w-]*)\s*=(.*)$/.exec(line);
    if (!entry) continue;
    const key = `${section}.${entry[1]!.toLowerCase()}`;
    const include = (section === "include" || section === "includeif") && key.endsWith(".path");
    if (!include && key !== "core.excludesfile" && key !== "core.attributesfile") continue;
    const value = configValue(entry[2]!);
    if (value === "") continue;
    const path = value.startsWith("~/") ? join(home, value.slice(2)) : isAbsolute(value) ? value : resolve(dirname(config), value);
    named.push(path);
    if (include) named.push(...(await namedFiles(path, home, depth + 1)));
  }
  return named;
}

/** The user's own config and attributes files, which git reads in every repository. */
const homeFolder = (): string => process.env.HOME ?? homedir();

function userFiles(): string[] {
  const xdg = process.env.XDG_CONFIG_HOME || join(homeFolder(), ".config");
  const global = process.env.GIT_CONFIG_GLOBAL ?? join(homeFolder(), ".gitconfig");
  return [global, join(xdg, "git", "config"), join(xdg, "git", "attributes"), join(xdg, "git", "ignore")];
}

/** A pinned worktree's `commondir` file leads to another repository than the one holding its folder. */
export class CommonDirMoved extends FlowError {
  constructor(file: string, leadsTo: string) {
    super(
      "run_unavailable",
      `git cannot be run in this worktree: ${JSON.stringify(file)} names ${JSON.stringify(leadsTo)} for its repository, not the one holding it (git reads that worktree's refs there, and would keep its changes there). Every worktree shares the repository's git folder, so a worktree child's bash can rewrite it; git writes "../.." there.`,
    );
    this.name = "CommonDirMoved";
  }
}

/**
 * The common git folder of the worktree whose own folder is `gitDir`: the folder `git worktree add`
 * made it in (`<common>/worktrees/<id>`), whatever its `commondir` file says now.
 */
export const madeInCommonDir = (gitDir: string): string => dirname(dirname(gitDir));

/** Throws CommonDirMoved when `common`, read from the worktree's `commondir`, is not the folder holding `gitDir`. */
async function assertOwnCommonDir(gitDir: string, common: string): Promise<void> {
  const made = madeInCommonDir(gitDir);
  if (common === made) return;
  const [real, madeReal] = await Promise.all([realpath(common).catch(() => common), realpath(made).catch(() => made)]);
  if (real !== madeReal) throw new CommonDirMoved(join(gitDir, "commondir"), common);
}

/**
 * Refuses (GitFileUnreadable) to let git run from `cwd`, or in the worktree whose git folder is
 * `gitDir`, when a file git opens first is a FIFO, socket or device (the index only when `readsIndex`).
 * Outside a repository only the user's files are looked at: git says itself that there is none.
 */
export async function assertGitFilesReadable(cwd: string, gitDir: string | undefined, readsIndex: boolean): Promise<void> {
  const own = gitDir ?? (await foundGitDir(cwd));
  const paths = userFiles();
  if (own !== undefined) {
    const common = (await pointer(join(own, "commondir"), "")) ?? own;
    if (gitDir !== undefined) await assertOwnCommonDir(gitDir, common);
    paths.push(...OWN_FILES.filter((name) => readsIndex || name !== "index").map((name) => join(own, name)));
    if (common !== own) paths.push(...COMMON_FILES.map((name) => join(common, name)));
    else paths.push(...COMMON_FILES.filter((name) => !OWN_FILES.includes(name)).map((name) => join(own, name)));
  }
  await Promise.all(paths.map(assertReadable));
  // Then the files the configs name (checked first: a FIFO config is never read here).
  const configs = paths.filter((path) => /(^|\/)(config|config\.worktree|\.gitconfig)$/.test(path) || path === process.env.GIT_CONFIG_GLOBAL);
  const named = (await Promise.all(configs.map((config) => namedFiles(config, homeFolder())))).flat();
  await Promise.all(named.map(assertReadable));
}
