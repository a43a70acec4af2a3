// Which git repository a directory belongs to, and whether worktree isolation can work there.
import { realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { spawnSync } from "node:child_process";

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

/**
 * The repository of `cwd`, or configuration_invalid saying why not: no git, not a repository, a
 * bare repository, or one git cannot read.
 */
export function openRepository(cwd: string): Repository {
  // Synchronous: it is one of the checks made before launch, which have no await between them.
  const run = spawnSync("git", ["rev-parse", "--is-bare-repository", "--is-inside-work-tree", "--show-toplevel", "--git-common-dir", "--show-prefix"], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_DIR: undefined, GIT_WORK_TREE: undefined, LC_ALL: "C" },
  });
  if (run.error) throw why(cwd, `git could not be run (${run.error.message})`);
  const result = { code: run.status ?? 1, stderr: run.stderr.trim() };
  const lines = run.stdout.split("\n");
  if (result.code !== 0) {
    if (lines[0] === "true" || /this operation must be run in a work tree/.test(result.stderr)) throw why(cwd, "this is a bare repository, which has no files to work on");
    if (/not a git repository/i.test(result.stderr)) throw why(cwd, "this directory is not inside a git repository");
    throw why(cwd, `git cannot read this repository (${result.stderr.split("\n")[0] ?? `exit ${result.code}`})`);
  }
  const [bare, inside, top, common, prefix] = lines;
  if (bare === "true") throw why(cwd, "this is a bare repository, which has no files to work on");
  if (inside !== "true" || !top) throw why(cwd, "this directory is inside a .git directory, not a working tree");
  const root = realpathSync(top);
  const commonDir = realpathSync(isAbsolute(common ?? "") ? common! : resolve(cwd, common ?? ".git"));
  return { root, commonDir, prefix: prefix ?? "" };
}
