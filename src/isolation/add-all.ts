// `git add -A` of a whole tree, into a private index or a child's worktree. git refuses the whole
// add when a folder holds a repository with no commit yet (`git init`, `cargo new`, a scaffolder):
// "does not have a commit checked out". Such a folder has nothing git could keep of it, so it is
// passed over and named, and everything else is added.
import { runGit, type GitOptions } from "./git.ts";

const NO_COMMIT = /^error: '(.+)' does not have a commit checked out$/gm;

/** Runs `git add -A -- :/ ...pathspecs`; returns the folders passed over (repositories with no commit). */
export async function addAll(options: GitOptions, pathspecs: readonly string[]): Promise<string[]> {
  const passed: string[] = [];
  // Each try names every such folder git met; a bounded number of tries, whatever git says.
  for (let tries = 0; tries < 8; tries++) {
    const excluded = passed.map((path) => `:(top,exclude,literal)${path}`);
    const added = await runGit(["add", "-A", "--", ":/", ...pathspecs, ...excluded], options);
    if (added.code === 0) return passed;
    const found = [...added.stderr.matchAll(NO_COMMIT)].map((match) => match[1]!.replace(/\/$/, "")).filter((path) => !passed.includes(path));
    if (found.length === 0) throw new Error(`git add failed: ${added.stderr || `exit ${added.code}`}`);
    passed.push(...found);
  }
  throw new Error(`git add failed: too many repositories with no commit (${passed.length})`);
}
