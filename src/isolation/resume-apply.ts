// An apply killed (or failing) between two files leaves the run "applying" (unfinished-apply.ts):
// some of the files it was writing hold the merge, the rest the user's tree as it was before it,
// and the one git was writing when it stopped may be gone. When every such file is one of those,
// nothing of the user's has changed since: the files are put back as they were before it (the
// tree kept on refs/pi-flow-before/<runId>), and the apply runs again as a fresh one over the tree
// as it is now. A file the user changed since (or one git left half written) is theirs: the apply
// is refused, naming it (docs/isolation.md).
import { lstat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { RunFiles } from "../runs/index.ts";
import { removeEmptiedFolders, throughLink } from "./apply.ts";
import { readChanges } from "./changes.ts";
import type { ChangeRecord } from "./change-record.ts";
import { checkoutWithUserAttributes } from "./checkout.ts";
import { git, nulFields, runGit } from "./git.ts";
import type { Repository } from "./repository.ts";
import { changedSince } from "./snapshot.ts";
import { interruptedApply, settleMark, withoutMark } from "./unfinished-apply.ts";

/** What an unfinished apply left: the files to put back as they were before it, or those changed since (the user's). */
type Leftover = { back: string[]; beforeTree: string } | { changedSince: string[] };

/** Reads, and changes nothing: whether each file the apply was touching is as before it, as its merge, or gone. */
export async function leftoverOf(repo: Repository, runId: string, record: ChangeRecord): Promise<Leftover> {
  const kept = await readChanges(repo.root, runId);
  if (!record.before || !kept) return { changedSince: [] };
  const beforeTree = await git(["rev-parse", `${record.before}^{tree}`], { cwd: repo.root });
  // The same merge as the apply's: its two sides are the kept commits.
  const merged = await runGit(["merge-tree", "--write-tree", "-z", "--no-messages", record.before, kept.commit], { cwd: repo.root });
  if (merged.code !== 0) return { changedSince: [] };
  const mergedTree = nulFields(merged.stdout)[0]!;
  const touching = record.touching ?? [];
  const notAsBefore = await changedSince(repo, beforeTree, touching);
  const notAsMerged = new Set(await changedSince(repo, mergedTree, touching));
  const changed: string[] = [];
  for (const path of notAsBefore) if (notAsMerged.has(path) && (await lstat(join(repo.root, path)).catch(() => null))) changed.push(path);
  return changed.length > 0 ? { changedSince: changed } : { back: notAsBefore, beforeTree };
}

/** The typed refusal of an unfinished apply that cannot be finished, or nothing when it can. */
export async function assertResumable(repo: Repository, runId: string, record: ChangeRecord): Promise<void> {
  const leftover = await leftoverOf(repo, runId, record);
  if ("changedSince" in leftover) throw interruptedApply(runId, record, leftover.changedSince);
}

/**
 * Puts the files of an unfinished apply back as they were before it, and the run back to "kept";
 * the record to apply from. Under the repository lock: that apply is certainly over.
 */
export async function rollBackUnfinished(repo: Repository, files: Pick<RunFiles, "changes">, runId: string, record: ChangeRecord): Promise<ChangeRecord> {
  const leftover = await leftoverOf(repo, runId, record);
  if ("changedSince" in leftover) throw interruptedApply(runId, record, leftover.changedSince);
  const listed = await runGit(["ls-tree", "-r", "-z", "--name-only", leftover.beforeTree], { cwd: repo.root });
  if (listed.code !== 0) throw new Error(`git ls-tree failed: ${listed.stderr}`);
  const held = new Set(nulFields(listed.stdout));
  await checkoutWithUserAttributes(repo.root, leftover.beforeTree, leftover.beforeTree, leftover.back.filter((path) => held.has(path)));
  // New files it wrote: the tree before it had none there.
  const made = leftover.back.filter((path) => !held.has(path));
  for (const path of made) if (!(await throughLink(repo.root, path))) await unlink(join(repo.root, path)).catch(() => undefined);
  await removeEmptiedFolders(repo.root, made);
  await settleMark(repo.root, files, record, runId, "kept");
  return { ...withoutMark(record), state: "kept" };
}
