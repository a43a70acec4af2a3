// The files git reads as it goes, past the few it opens first (git-files.ts, checked before every
// git): loose refs and reflogs, loose objects and packs (the repository's and its alternates'), the
// worktrees' administrative folders, the pseudo-refs (ORIG_HEAD, FETCH_HEAD). Every worktree shares
// them, so a worktree child's bash can replace one with a FIFO (`mkfifo .git/refs/heads/x`), and
// every git that reads it would wait for a writer until the time limit. Too many to look at before
// each git, they are looked at once per operation: before a child's base is captured, its worktree
// made or removed, its changes kept, and before an apply (docs/isolation.md).
import { execFile } from "node:child_process";
import { lstat, readdir, realpath, stat, unlink } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { errorCode } from "../runs/index.ts";
import { GIT_TIMEOUT_VARIABLE, gitTimeoutMs, nulBytes } from "./git.ts";
import { GitFileUnreadable, kindOf } from "./git-files.ts";
import { readPlainFile } from "./plain-file.ts";

/** The folders of the common git folder git reads from as it goes. */
const READ_FOLDERS = ["refs", "logs", "objects", "worktrees"];
/** A pseudo-ref at the top of the git folder (ORIG_HEAD, FETCH_HEAD, MERGE_HEAD): the names git gives them. */
const PSEUDO_REF = /^[A-Z][A-Z_]*$/;
/** git follows alternates at most this deep (its own limit is 5). */
const ALTERNATES_DEPTH_MAX = 5;
/** An alternates file holds a few paths: a larger one is not read for them (git-files.ts refuses a FIFO there). */
const ALTERNATES_MAX_BYTES = 64 * 1024;
/** Folders reached through links (a git-new-workdir's refs and objects are links) followed at most. */
const LINKED_FOLDERS_MAX = 64;
/** The most of find's listing read: only what is neither file nor folder, far fewer than the folder's files. */
const LISTING_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Refuses (GitFileUnreadable, naming the first one found) when a file git reads as it goes in the
 * repository whose common git folder is `commonDir` is a FIFO, socket or device, itself or through
 * a link. Nothing is opened: entries are listed and stated.
 */
export async function assertGitFolderReadable(commonDir: string): Promise<void> {
  if (process.platform === "win32") return; // no FIFOs
  const worktreesLinked = (await lstat(join(commonDir, "worktrees")).catch(() => null))?.isSymbolicLink() === true;
  const read = READ_FOLDERS.filter((name) => name !== "worktrees" || !worktreesLinked);
  const folders = [...read.map((name) => join(commonDir, name)), ...(await alternateFolders(join(commonDir, "objects")))];
  const top = await readdir(commonDir, { withFileTypes: true }).catch(() => []);
  const pseudoRefs = top.filter((entry) => PSEUDO_REF.test(entry.name) && !entry.isFile() && !entry.isDirectory()).map((entry) => join(commonDir, entry.name));
  await assertEntriesReadable(pseudoRefs, []);
  const worktrees = join(commonDir, "worktrees");
  const seen = new Set<string>();
  let followed = 0;
  for (let queue = folders; queue.length > 0; ) {
    const linked: string[] = [];
    const fresh: string[] = [];
    for (const folder of queue) {
      const real = await realpath(folder).catch(() => undefined);
      if (real === undefined || seen.has(real)) continue;
      seen.add(real);
      fresh.push(folder);
    }
    const entries = await unusualEntries(fresh);
    // A worktree's own index is its child's to break, and pi-flow's git never reads it (child-index.ts).
    const inWorktrees = (path: string | Buffer): string | undefined => (path.toString().startsWith(`${worktrees}/`) ? path.toString().slice(worktrees.length + 1) : undefined);
    const ownIndex = (path: string | Buffer): boolean => /^[^/]+\/index$/.test(inWorktrees(path) ?? "");
    // A link to a worktree's folder is not followed: it is removed before any git worktree command (removeWorktreeFolderLinks).
    const worktreeLink = (path: string | Buffer): boolean => inWorktrees(path)?.includes("/") === false;
    await assertEntriesReadable(entries.filter((path) => !ownIndex(path) && !worktreeLink(path)), linked);
    followed += linked.length;
    if (followed > LINKED_FOLDERS_MAX) throw new GitFileUnreadable(linked[0]!, `one of over ${LINKED_FOLDERS_MAX} links to folders`);
    queue = linked;
  }
}

/**
 * Throws for a FIFO, socket or device among `paths` (links followed); folders links lead to are
 * added to `linked`. Paths are bytes: a name that is no UTF-8 is stated as git reads it, not as
 * the replacement characters a string would hold.
 */
async function assertEntriesReadable(paths: readonly (string | Buffer)[], linked: string[]): Promise<void> {
  for (const path of paths) {
    const own = await lstat(path).catch(() => null);
    if (!own) continue;
    const kind = kindOf(own);
    if (kind) throw new GitFileUnreadable(path.toString(), kind);
    if (!own.isSymbolicLink()) continue;
    const target = await stat(path).catch(() => null); // a dangling link is no ref git waits on
    const targetKind = target ? kindOf(target) : undefined;
    if (targetKind) throw new GitFileUnreadable(path.toString(), `a link to ${targetKind}`);
    if (target?.isDirectory()) linked.push(await linkedFolder(path));
  }
}

/** The real path of a folder a link leads to, as a string: one that is no UTF-8 could not be listed, and is refused. */
async function linkedFolder(link: string | Buffer): Promise<string> {
  const real = await realpath(link, { encoding: "buffer" });
  const text = real.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(real)) throw new GitFileUnreadable(link.toString(), "a link to a folder whose name is not UTF-8");
  return text;
}

/** The object folders `objects/info/alternates` names, and theirs in turn. */
async function alternateFolders(objects: string, depth = 0): Promise<string[]> {
  if (depth >= ALTERNATES_DEPTH_MAX) return [];
  const file = join(objects, "info", "alternates");
  const info = await stat(file).catch(() => null);
  if (!info?.isFile() || info.size > ALTERNATES_MAX_BYTES) return [];
  const lines = ((await readPlainFile(file, { maxBytes: ALTERNATES_MAX_BYTES }))?.toString("utf8") ?? "").split("\n").map((line) => line.trim());
  const named = lines.filter((line) => line !== "" && !line.startsWith("#")).map((line) => (isAbsolute(line) ? line : resolve(objects, line)));
  const deeper = await Promise.all(named.map((folder) => alternateFolders(folder, depth + 1)));
  return [...named, ...deeper.flat()];
}

/** The entries under `folders` (at any depth, links not followed) that are neither a file nor a folder: links, FIFOs, sockets, devices. */
async function unusualEntries(folders: readonly string[]): Promise<(string | Buffer)[]> {
  const present: string[] = [];
  for (const folder of folders) if (await lstat(folder).catch(() => null)) present.push(folder);
  if (present.length === 0) return [];
  return (await foundByFind(present)) ?? (await Promise.all(present.map(foundByWalk))).flat();
}

/** `find` walks the folders in C, all in one run: a repository's loose objects can number thousands. Undefined when there is no find. */
function foundByFind(folders: readonly string[]): Promise<Buffer[] | undefined> {
  return new Promise((done, fail) => {
    // A folder may itself be a link (a git-new-workdir's objects): "-H" lists what it leads to.
    const args = ["-H", ...folders, "!", "-type", "f", "!", "-type", "d", "-print0"];
    const limitMs = gitTimeoutMs();
    const named = folders.map((folder) => JSON.stringify(folder)).join(", ");
    execFile("find", args, { encoding: "buffer", maxBuffer: LISTING_MAX_BYTES, timeout: limitMs, killSignal: "SIGKILL" }, (error, stdout) => {
      if (error && errorCode(error) === "ENOENT") done(undefined);
      // A link to a folder as large as a disk: git would walk it as long (for-each-ref follows links in refs/).
      else if (error?.killed) fail(new FlowError("run_unavailable", `looking through ${named} for FIFOs git would wait on took over ${limitMs / 1000} s, git's time limit: a link in the repository's git folder leads to a folder that large? ${GIT_TIMEOUT_VARIABLE} (milliseconds) raises the limit.`));
      else if (error && errorCode(error) === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") fail(new GitFileUnreadable(folders[0]!, "a folder holding millions of links, FIFOs or other entries that are no files"));
      // A folder git cannot read either (a permission, an entry removed as find walked) is git's own to report.
      else done(nulBytes(stdout));
    });
  });
}

/** The same, read here, where no find is installed: slower in a large folder, never wrong. */
async function foundByWalk(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => !entry.isFile() && !entry.isDirectory()).map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Removes the links among the worktrees' own folders (`worktrees/<id>`), and `worktrees` itself
 * when it is one. git follows such a link as it deletes a worktree's folder: `git worktree prune`
 * (which crash cleanup runs at every session start) takes a folder holding no `gitdir` file for a
 * stale worktree's and deletes every file of the folder the link leads to (`ln -s ~ .git/worktrees/x`
 * in a child's bash: the user's home). A link is removed by itself, nothing it leads to is touched.
 * Returns the links removed.
 */
export async function removeWorktreeFolderLinks(commonDir: string): Promise<string[]> {
  const worktrees = join(commonDir, "worktrees");
  const info = await lstat(worktrees).catch(() => null);
  if (info?.isSymbolicLink()) return (await unlink(worktrees).then(() => [worktrees], () => []));
  if (!info?.isDirectory()) return [];
  const links = (await readdir(worktrees, { withFileTypes: true })).filter((entry) => entry.isSymbolicLink()).map((entry) => join(worktrees, entry.name));
  for (const link of links) await unlink(link).catch(() => undefined);
  return links;
}
