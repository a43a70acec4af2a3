// A worktree child's changes as one git patch, and that patch played back into a worktree: what a
// cassette keeps of a writer, so a replayed writer changes its worktree as the recorded one did.
import { addChildTree } from "./child-attributes.ts";
import { leftOut, removeSpecialFiles, uncheckablePaths } from "./special-files.ts";
import { gitPlace, PATCH_OPTIONS, runGit, type PinnedWorktree } from "./git.ts";

/** Where a worktree child works: its worktree (pinned, see PinnedWorktree) and the commit it was made from. */
interface ChildWorktree extends PinnedWorktree {
  base: string;
}

/**
 * Everything the child left in its worktree (ignored files aside) against its base, as
 * `git diff --binary` writes it (binary files as git binary patches). Null when nothing changed.
 * Staging in the worktree's own index is harmless: keeping the changes stages them all anyway.
 */
export async function worktreePatch(worktree: ChildWorktree): Promise<Buffer | null> {
  // What keeping the changes leaves out is left out here too: FIFOs and sockets, files in folders git takes for git folders, a folder git-initialised without a commit.
  await removeSpecialFiles(worktree.path);
  await addChildTree(gitPlace(worktree), worktree.base, leftOut(await uncheckablePaths(gitPlace(worktree), [])), true);
  const out = await runGit(["diff", "--cached", "--binary", ...PATCH_OPTIONS, "--find-renames", worktree.base], gitPlace(worktree));
  if (out.code !== 0) throw new Error(`git diff failed: ${out.stderr}`);
  return out.stdout.length > 0 ? out.stdout : null;
}

/**
 * Applies `patch` to the worktree's files, all or nothing (git apply checks every hunk before it
 * writes one). The failure is git's own message.
 */
export async function applyPatch(worktree: ChildWorktree, patch: Buffer): Promise<{ ok: true } | { ok: false; message: string }> {
  const out = await runGit(["apply", "--whitespace=nowarn", "-"], { ...gitPlace(worktree), input: patch });
  return out.code === 0 ? { ok: true } : { ok: false, message: out.stderr || `git apply exited ${out.code}` };
}

/** What a harness may do with a child's worktree: read its changes, play a patch into it. */
export function worktreeChanges(worktree: ChildWorktree): { changes(): Promise<Buffer | null>; apply(patch: Buffer): Promise<{ ok: true } | { ok: false; message: string }> } {
  return { changes: () => worktreePatch(worktree), apply: (patch) => applyPatch(worktree, patch) };
}
