// An apply that began writing the working tree and did not finish (pi-flow killed, or git failing
// on a file half way): the tree may hold some of the run's files and not others. The run's record
// says so ("applying", the files), and the user's tree as it was stays in git, named by a ref,
// until the run is discarded: what the apply overwrote can always be put back.
import { FlowError } from "../contract/errors.ts";
import type { RunFiles } from "../runs/index.ts";
import { git, runGit } from "./git.ts";
import { nameList, writeChangeRecord, type ChangeRecord } from "./change-record.ts";

/** The commit of the user's tree as it was before an unfinished apply (its parent is the run's base). */
export const beforeApplyRef = (runId: string): string => `refs/pi-flow-before/${runId}`;

/** Marks the run `applying` before the first file is written: the files it will touch, and the tree before it, kept. */
export async function markApplying(root: string, files: Pick<RunFiles, "changes">, record: ChangeRecord, runId: string, touching: string[], before: string): Promise<void> {
  await git(["update-ref", beforeApplyRef(runId), before], { cwd: root });
  await writeChangeRecord(files, { ...record, state: "applying", touching, before });
}

/** The record without an apply's mark (its files, the tree before it). */
export function withoutMark(record: ChangeRecord): ChangeRecord {
  const { touching: _touching, before: _before, ...rest } = record;
  return rest;
}

/**
 * Settles the run's record (`applied`, `kept`, `discarded`), then lets go of the tree kept before
 * an apply: in that order, so a crash between leaves a named tree too many, never a mark naming none.
 */
export async function settleMark(root: string, files: Pick<RunFiles, "changes">, record: ChangeRecord, runId: string, state: ChangeRecord["state"]): Promise<void> {
  await writeChangeRecord(files, { ...withoutMark(record), state });
  await runGit(["update-ref", "-d", beforeApplyRef(runId)], { cwd: root });
}

/**
 * What an unfinished apply left, and what the user can do: put back a file from the tree as it
 * was, then discard the run. `how`: "previous apply was interrupted" (found under the repository
 * lock: that apply is certainly over) or "apply failed (git's reason)".
 */
export function unfinishedApplyMessage(runId: string, record: ChangeRecord, how: string): string {
  const files = record.touching ?? [];
  const touched = files.length > 0 ? `; it was writing or deleting: ${nameList(files)}` : "";
  const back = record.before
    ? ` The files as they were before it are kept in commit ${record.before} (${beforeApplyRef(runId)}): \`git restore --source=${record.before} --worktree -- <file>\` puts one back (a file that commit lacks was new).`
    : "";
  return `Run ${runId}'s ${how} while writing the working tree, which may hold some of its changes and not others${touched}. It will not be applied over that tree.${back} Once each of those files is as it was before it, or as the apply writes it, or gone, apply the run again: it puts them back as they were and applies afresh. Or discard the run: that keeps the working tree as it is. Its changes stay in its patch view.`;
}

/**
 * The typed refusal of an apply of a run whose previous apply did not finish, naming the files of it
 * changed since (neither as they were before it nor as it writes them: see resume-apply.ts).
 */
export function interruptedApply(runId: string, record: ChangeRecord, changed: readonly string[] = []): FlowError {
  const since = changed.length > 0 ? ` ${nameList(changed)} changed since (${changed.length === 1 ? "it is" : "they are"} neither as before it nor as it writes ${changed.length === 1 ? "it" : "them"}), so it is not finished over ${changed.length === 1 ? "it" : "them"}.` : "";
  return new FlowError("run_unavailable", `${unfinishedApplyMessage(runId, record, "previous apply was interrupted")}${since} Nothing was applied now.`);
}
