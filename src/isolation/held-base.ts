// A worktree child's base is a commit no ref names until its worktree is made, and a background
// child waits for a slot meanwhile: a `git gc --prune=now` then (the user's, a sibling child's)
// deletes it, and the child fails with git's "invalid reference". So the base is held on
// refs/pi-flow-base/<runId> from its capture until the child settles (its kept changes name it as
// their parent after); crash cleanup drops one whose run is gone.
import { git, runGit } from "./git.ts";

export const baseRef = (runId: string): string => `refs/pi-flow-base/${runId}`;

export async function holdBase(root: string, runId: string, base: string): Promise<void> {
  await git(["update-ref", baseRef(runId), base], { cwd: root });
}

export async function releaseBase(root: string, runId: string): Promise<void> {
  await runGit(["update-ref", "-d", baseRef(runId)], { cwd: root });
}
