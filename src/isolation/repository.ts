// Which git repository a directory belongs to, and whether worktree isolation can work there.
import { existsSync, readFileSync, statSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { runGit, type GitResult } from "./git.ts";
import { assertGitFolderReadable } from "./git-folder-scan.ts";

export interface Repository {
  /** The working tree's top directory (real path). */
  root: string;
  /** The repository's common git directory: refs and worktrees live there, shared by all worktrees. */
  commonDir: string;
  /** The asking directory relative to `root`, "" at the top, with a trailing "/" otherwise. */
  prefix: string;
}

const why = (cwd: string, reason: string) =>
  new FlowError("configuration_invalid", `isolation "worktree" needs a git working tree: ${reason} (cwd ${JSON.stringify(cwd)}).`);

/** The nearest `.git` at or above `cwd`: where git would have found a repository it could read. */
function nearestDotGit(cwd: string): string | null {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return join(dir, ".git");
    if (dirname(dir) === dir) return null;
  }
}

/**
 * configuration_invalid when git takes another folder than the one holding the nearest `.git` for
 * the working tree: the repository's config sets `core.worktree` (a worktree child's bash can, in
 * the config every worktree shares), and a base or an apply would read or write that folder.
 */
async function assertTopHoldsGit(cwd: string, top: string): Promise<void> {
  const dotGit = nearestDotGit(cwd);
  if (!dotGit) return;
  const [gitsTop, holding] = await Promise.all([realpath(top), realpath(dirname(dotGit))]);
  if (gitsTop === holding) return;
  throw why(
    cwd,
    `git takes ${JSON.stringify(top)} for the working tree of the repository at ${JSON.stringify(dotGit)}: its config sets core.worktree to ${JSON.stringify(top)} (a worktree child's bash can set it in the config every worktree shares). If you did not set it, remove it (git config --unset core.worktree)`,
  );
}

/**
 * Why git takes the repository of `cwd` for a bare one: a checkout whose `.git/config` sets core.bare
 * (a worktree child's bash can), else a bare repository indeed.
 */
function bareReason(cwd: string): string {
  const dotGit = nearestDotGit(cwd);
  const config = dotGit ? statSync(join(dotGit, "config"), { throwIfNoEntry: false }) : undefined;
  // Read only a plain file of a config's size: the bare repository itself may sit inside a checkout whose .git says nothing of it.
  const setsBare = dotGit && config?.isFile() && config.size < 1024 * 1024 && /^\s*bare\s*=\s*true\s*$/im.test(readFileSync(join(dotGit, "config"), "utf8"));
  if (!setsBare) return "this is a bare repository, which has no files to work on";
  return `git takes the repository at ${JSON.stringify(dotGit)} for a bare one: its config sets core.bare to true (a worktree child's bash can set it in the config every worktree shares). If you did not set it, remove it (git config --unset core.bare)`;
}

/**
 * The repository of `cwd`, or configuration_invalid saying why not: no git, not a repository, a
 * bare repository, or one git cannot read. git runs as a child process the host does not wait on:
 * its event loop keeps turning (other sessions' tools, timers, progress) while git answers.
 */
export async function openRepository(cwd: string): Promise<Repository> {
  let run: GitResult;
  try {
    run = await runGit(["rev-parse", "--is-bare-repository", "--is-inside-work-tree", "--show-toplevel", "--git-common-dir", "--show-prefix"], { cwd, findsTop: true });
  } catch (error) {
    throw why(cwd, `git could not be run (${(error as Error).message})`);
  }
  const stderr = run.stderr;
  const lines = run.stdout.toString("utf8").split("\n");
  if (run.code !== 0) {
    if (lines[0] === "true" || /this operation must be run in a work tree/.test(stderr)) throw why(cwd, bareReason(cwd));
    if (/not a git repository/i.test(stderr)) {
      // git passes over a .git it cannot read (a damaged HEAD, say) as if it were not there.
      const dotGit = nearestDotGit(cwd);
      if (dotGit) throw why(cwd, `git cannot read the repository at ${JSON.stringify(dotGit)}: it is not a valid git directory (its HEAD, refs or objects are missing or damaged)`);
      throw why(cwd, "this directory is not inside a git repository");
    }
    throw why(cwd, `git cannot read this repository (${stderr.split("\n")[0] || `exit ${run.code}`})`);
  }
  const [bare, inside, top, common, prefix] = lines;
  if (bare === "true") throw why(cwd, bareReason(cwd));
  if (top) await assertTopHoldsGit(cwd, top);
  if (inside !== "true" || !top) throw why(cwd, "this directory is inside a .git directory, not a working tree");
  const root = await realpath(top);
  const commonDir = await realpath(isAbsolute(common ?? "") ? common! : resolve(cwd, common ?? ".git"));
  // Every operation opens its repository first: a FIFO among its refs or objects is refused here, not waited on.
  await assertGitFolderReadable(commonDir);
  return { root, commonDir, prefix: prefix ?? "" };
}
