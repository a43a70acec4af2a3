// What a child can leave in its worktree that git cannot read as files. A FIFO named `.gitignore`
// or `.gitattributes` (any folder) makes every git that reads the tree's ignore rules or attributes
// (`add -A`, `ls-files --exclude-standard`, `status`) wait in open() for a writer, forever: its run
// would never settle. A FIFO or socket in place of a tracked file makes `git add -A` refuse the
// whole tree. git keeps neither kind, so they are removed before git reads the worktree. And a file
// in a folder git takes for a git folder (`.GIT`, `.git.`, `git~1`) makes `git add` refuse the whole
// tree too ("invalid path"): it is left out by pathspec (docs/isolation.md, "Ref").
import { execFile } from "node:child_process";
import { readdir, unlink } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { errorCode } from "../runs/index.ts";
import { uncheckable } from "./git-folder-links.ts";
import { nulBytes, nulFields, runGit, type GitOptions } from "./git.ts";

/** The most of find's listing read: names of FIFOs and sockets only, far fewer than any worktree's files. */
const LISTING_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Removes the FIFOs and sockets in the worktree at `path` (not in its nested git folders), and
 * returns their paths in it, sorted. Windows has neither. `find` walks the tree in C: reading it
 * here would cost a settle seconds in a worktree holding node_modules.
 */
export async function removeSpecialFiles(path: string): Promise<string[]> {
  if (process.platform === "win32") return [];
  const found = (await foundByFind(path)) ?? (await foundByWalk(path));
  // A FIFO is removed, never opened: unlink takes whatever is at the name, reading nothing. By its
  // bytes: a folder name that is not UTF-8 would read as U+FFFD, and that name finds no FIFO.
  for (const name of found) await unlink(typeof name === "string" ? join(path, name) : Buffer.concat([Buffer.from(`${path}${sep}`), name])).catch(() => undefined);
  return found.map((name) => name.toString()).sort();
}

/** The FIFOs and sockets `find` lists (paths in the worktree, sorted); undefined when there is no find to run. */
function foundByFind(path: string): Promise<Buffer[] | undefined> {
  return new Promise((resolve, reject) => {
    const args = [".", "-name", ".git", "-prune", "-o", "(", "-type", "p", "-o", "-type", "s", ")", "-print0"];
    execFile("find", args, { cwd: path, encoding: "buffer", maxBuffer: LISTING_MAX_BYTES }, (error, stdout) => {
      if (error && errorCode(error) === "ENOENT") resolve(undefined);
      else if (error) reject(new Error(`listing the worktree's FIFOs and sockets failed: ${error.message}`));
      else resolve(nulBytes(stdout).map((name) => name.subarray(name.subarray(0, 2).toString() === "./" ? 2 : 0)));
    });
  });
}

/** The same, read here, where no find is installed: slower in a large tree, never wrong. */
async function foundByWalk(path: string): Promise<string[]> {
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFIFO() || entry.isSocket())
    .map((entry) => relative(path, join(entry.parentPath, entry.name)))
    .filter((name) => !name.split(sep).includes(".git"))
    .sort();
}

/** Pathspecs leaving `paths` out, read literally: a name the child chose is never read as a pattern. */
export const leftOut = (paths: readonly string[]): string[] => paths.map((path) => `:(top,exclude,literal)${path}`);

/** Whether git refuses to add `path` of an ls-files listing: in a folder it takes for a git folder (see uncheckable). */
export const inGitFolder = (path: string): boolean => !path.endsWith("/") && uncheckable(path); // a folder listed ("lib/") is a repository of its own, left out by itself

/** The paths `git add -A -- :/ ...pathspecs` would meet in a folder git takes for a git folder, which git refuses to add. */
export async function uncheckablePaths(place: GitOptions, pathspecs: readonly string[]): Promise<string[]> {
  const listed = await runGit(["ls-files", "-z", "-o", "--exclude-standard", "--", ":/", ...pathspecs], place);
  if (listed.code !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return nulFields(listed.stdout).filter(inGitFolder);
}
