// A worktree shares the repository's branches and tags: a child's `git checkout -b fix && git
// commit` or `git tag v2` leaves refs in the user's repository after its worktree is gone, where
// nothing of an apply shows them. A ref that holds the child's base (a pi-flow commit made for it)
// can only have been made from a worktree started from it: the child's run names them.
import { runGit } from "./git.ts";

/** The branches and tags whose history holds `base`, sorted. */
export async function refsOnBase(root: string, base: string): Promise<string[]> {
  const listed = await runGit(["for-each-ref", "--contains", base, "--format=%(refname)", "refs/heads", "refs/tags"], { cwd: root });
  if (listed.code !== 0) throw new Error(`git for-each-ref failed: ${listed.stderr}`);
  // One a line: a ref's name holds no line break (git check-ref-format).
  return listed.stdout.toString("utf8").split("\n").filter((name) => name !== "").sort();
}
