// external_runs apply and discard: a worktree run's kept changes land on the user's working tree
// (3-way, all or nothing per run, in the order given) or are dropped. Every target is checked
// before any is touched: unknown or another session's run is run_unavailable, an unfinished one
// request_invalid.
import { existsSync } from "node:fs";
import { FlowError } from "../contract/errors.ts";
import { assertRunId, runFiles, type RunStore } from "../runs/index.ts";
import { applyChanges } from "./apply.ts";
import { dropChanges, readChanges } from "./changes.ts";
import { nulFields, runGit } from "./git.ts";
import { nameList, readChangeRecord, shownName, writeChangeRecord, type ChangeRecord } from "./change-record.ts";
import { assertChangesReadable } from "./readable-changes.ts";
import { filesToReview, type ReviewNote } from "./review-files.ts";
import { interruptedApply, markApplying, settleMark, unfinishedApplyMessage, withoutMark } from "./unfinished-apply.ts";
import { assertResumable, rollBackUnfinished } from "./resume-apply.ts";
import { openRepository } from "./repository.ts";
import { assertFlowHomeApart } from "./snapshot.ts";
import { assertNoOperationInProgress } from "./operation-in-progress.ts";
import { patientWait, withRepositoryLock, type LockWait, type WaitOptions } from "./repository-lock.ts";

export type ChangeAction = "apply" | "discard";

export interface ChangeAnswer {
  runId: string;
  status: "applied" | "conflict" | "nothing_to_apply" | "already_applied" | "discarded";
  /** applied: the files written or deleted; conflict: the files that conflict (nothing was changed). The first ANSWER_FILES_MAX. */
  files?: string[];
  /** How many files past the first ANSWER_FILES_MAX `files` leaves out (an applied run's changes.json keeps them all, as appliedFiles). */
  moreFiles?: number;
  /** conflict: why, when it is not a conflict git found (a file the user's tree ignores in the way, a link into .git). */
  reason?: string;
  /**
   * applied: the files it wrote that a person should read before running anything in the project
   * (a hook, an .envrc, a CI workflow, changed npm scripts, a link out of the tree…), and why. The first ANSWER_FILES_MAX.
   */
  review?: ReviewNote[];
}

/**
 * At most this many file names in an answer's data: a child that wrote 50,000 files (an un-ignored
 * node_modules) must not make an answer of megabytes for a workflow or a session to hold.
 */
export const ANSWER_FILES_MAX = 200;

/** `files` as an answer holds them: the first ANSWER_FILES_MAX, and how many more. */
function answerFiles(files: readonly string[]): Pick<ChangeAnswer, "files" | "moreFiles"> {
  return files.length > ANSWER_FILES_MAX ? { files: files.slice(0, ANSWER_FILES_MAX), moreFiles: files.length - ANSWER_FILES_MAX } : { files: [...files] };
}

export const MAX_CHANGE_TARGETS = 100;

/** The warning an apply's envelope carries when a run it applied wrote files to review (ChangeAnswer.review). */
export const CHANGES_NEED_REVIEW = "changes_need_review";

/** How an apply or discard waits for the repository lock (see LockWait and LOCK_PATIENCE_MS): the CLI says who holds it. */
export type ChangeWait = WaitOptions;

const lockWait = (action: ChangeAction, runId: string, wait: ChangeWait): LockWait =>
  patientWait(`${action === "apply" ? "applying" : "discarding"} run ${runId}'s changes`, wait);

/** The run IDs of a call: 1 to 100, well formed, none twice. */
export function targetIds(runIds: unknown): string[] {
  if (!Array.isArray(runIds) || runIds.length === 0) throw new FlowError("request_invalid", "runIds must name at least one run.");
  if (runIds.length > MAX_CHANGE_TARGETS) throw new FlowError("request_invalid", `At most ${MAX_CHANGE_TARGETS} runIds per call; got ${runIds.length}.`);
  const ids = runIds.map(assertRunId);
  if (new Set(ids).size !== ids.length) throw new FlowError("request_invalid", "runIds lists a run more than once.");
  return ids;
}

type Files = ReturnType<typeof runFiles>;

/**
 * The answer for a run whose record leaves nothing to do: no changes kept, discarded, or applied.
 * Read again under the repository lock: an apply or discard that held it first may just have settled it.
 */
function settledAnswer(runId: string, record: ChangeRecord | null): ChangeAnswer | undefined {
  if (!record || record.state === "discarded" || record.state === "unavailable") return { runId, status: "nothing_to_apply" };
  if (record.state === "applied") return { runId, status: "already_applied" };
  return undefined;
}

/** Runs `work` under the lock of the repository at `root`; without it when there is no repository left to lock. */
async function lockedIn<T>(root: string, work: () => Promise<T>, wait: LockWait): Promise<T> {
  const repo = await openRepository(root).catch(() => undefined);
  return repo ? withRepositoryLock(repo.commonDir, work, wait) : work();
}

async function applyOne(runId: string, files: Files, home: string, wait: ChangeWait): Promise<ChangeAnswer> {
  const seen = readChangeRecord(files);
  const settled = settledAnswer(runId, seen);
  if (settled || !seen) return settled ?? { runId, status: "nothing_to_apply" };
  const repo = await openRepository(seen.root);
  return withRepositoryLock(repo.commonDir, async () => {
    const read = readChangeRecord(files);
    const now = settledAnswer(runId, read);
    if (now || !read) return now ?? { runId, status: "nothing_to_apply" };
    // Checked before any target was touched, and again here: a merge the user began since.
    await assertNoOperationInProgress(repo.root, runId);
    // An apply that did not finish: its files put back as they were, when none changed since, then applied afresh.
    const record = read.state === "applying" ? await rollBackUnfinished(repo, files, runId, read) : read;
    // Marked before the first file is written and cleared once the last is: a crash in between is found.
    let marked = false;
    const beforeWriting = async (touching: string[], before: string) => {
      await markApplying(repo.root, files, record, runId, touching, before);
      marked = true;
    };
    // Read before the apply drops the run's ref: what of it needs a person's review.
    const kept = await readChanges(repo.root, runId);
    const review = kept ? (await filesToReview(repo.root, kept.base, kept.commit)).slice(0, ANSWER_FILES_MAX) : [];
    const outcome = await applyChanges(repo, runId, { flowHome: home, beforeWriting }).catch((error: unknown) => {
      const mark = marked ? readChangeRecord(files) : null;
      if (mark?.state === "applying" && error instanceof Error) error.message = unfinishedApplyMessage(runId, mark, `apply failed (${error.message})`);
      throw error;
    });
    if (outcome.status === "conflict") {
      // A file saved while it merged: nothing was written, the run is as it was.
      if (marked) await settleMark(repo.root, files, record, runId, "kept");
      return { runId, status: "conflict", ...answerFiles(outcome.files), ...(outcome.reason ? { reason: outcome.reason } : {}) };
    }
    // Every file, in the run's evidence: the answer names only the first ANSWER_FILES_MAX.
    await settleMark(repo.root, files, outcome.status === "applied" ? { ...record, appliedFiles: outcome.files } : record, runId, "applied");
    await dropChanges(repo.root, runId);
    if (outcome.status !== "applied") return { runId, status: "nothing_to_apply" };
    return { runId, status: "applied", ...answerFiles(outcome.files), ...(review.length > 0 ? { review } : {}) };
  }, lockWait("apply", runId, wait));
}

async function discardOne(runId: string, files: Files, wait: ChangeWait): Promise<ChangeAnswer> {
  const seen = readChangeRecord(files);
  const settled = settledAnswer(runId, seen);
  if (settled || !seen) return settled ?? { runId, status: "nothing_to_apply" };
  const discard = async (): Promise<ChangeAnswer> => {
    const record = readChangeRecord(files);
    const now = settledAnswer(runId, record);
    if (now || !record) return now ?? { runId, status: "nothing_to_apply" };
    // A repository deleted outright took the run's ref with it: there is nothing left to drop.
    if (existsSync(record.root)) {
      try {
        await dropChanges(record.root, runId);
      } catch (error) {
        throw new FlowError("run_unavailable", `Run ${runId}'s changes could not be discarded: ${(error as Error).message}. Nothing was changed.`);
      }
    }
    // An unfinished apply's working tree is kept as it is, and the tree before it no longer named.
    if (existsSync(record.root)) await settleMark(record.root, files, record, runId, "discarded");
    else await writeChangeRecord(files, { ...withoutMark(record), state: "discarded" });
    return { runId, status: "discarded" };
  };
  return existsSync(seen.root) ? lockedIn(seen.root, discard, lockWait("discard", runId, wait)) : discard();
}

/** One run to apply or discard, and the run store (session) that holds it. */
export interface ChangeTarget {
  runs: RunStore;
  runId: string;
}

/**
 * Every target checked, none touched: unknown or another session's run, a workflow, an unfinished or
 * unreadable run, or one whose previous apply was interrupted.
 */
async function checkTargets(targets: readonly ChangeTarget[], action: ChangeAction, wait: ChangeWait = {}): Promise<void> {
  for (const { runs, runId } of targets) {
    const view = runs.view(runId); // run_unavailable for an unknown run or another session's
    if (view.kind !== "agent") throw new FlowError("request_invalid", `Run ${runId} is a workflow; ${action} its agent runs (children) instead. Nothing was ${action === "apply" ? "applied" : "discarded"}.`);
    if (view.state.status !== "done") throw new FlowError("request_invalid", `Run ${runId} has not finished; ${action} it once it is done. Nothing was ${action === "apply" ? "applied" : "discarded"}.`);
  }
  if (action !== "apply") return;
  for (const { runs, runId } of targets) {
    const files = runFiles(runs.scope, runId);
    const record = readChangeRecord(files);
    await assertChangesReadable(runId, record);
    if (record?.state === "kept") {
      assertFlowHomeApart(record.root, runs.scope.home);
      await assertNoOperationInProgress(record.root, runId);
    }
    if (record?.state === "applying") await assertNotInterrupted(runId, files, record.root, wait);
  }
}

/**
 * An "applying" mark seen under the lock is an interrupted apply (one still writing holds the lock):
 * refused when a file it was touching changed since (see resume-apply.ts), else finished by the apply.
 */
async function assertNotInterrupted(runId: string, files: Files, root: string, wait: ChangeWait): Promise<void> {
  await lockedIn(root, async () => {
    const record = readChangeRecord(files);
    if (record?.state !== "applying") return;
    const repo = await openRepository(root).catch(() => undefined);
    if (!repo) throw interruptedApply(runId, record);
    await assertResumable(repo, runId, record);
  }, lockWait("apply", runId, wait));
}

/**
 * Applies (or discards) each target's kept changes in order, once every target has been checked;
 * one run's conflict does not stop the next. Targets may come from several sessions (the shell).
 */
export async function changeTargets(targets: readonly ChangeTarget[], action: ChangeAction, wait: ChangeWait = {}): Promise<ChangeAnswer[]> {
  await checkTargets(targets, action, wait);
  const answers: ChangeAnswer[] = [];
  for (const { runs, runId } of targets) answers.push(await changeOne(action, runId, runs, answers, wait));
  return answers;
}

/** One run's change; a failure after others already changed the working tree names them, so nobody believes nothing was. */
async function changeOne(action: ChangeAction, runId: string, runs: RunStore, before: readonly ChangeAnswer[], wait: ChangeWait): Promise<ChangeAnswer> {
  try {
    const files = runFiles(runs.scope, runId);
    return await (action === "apply" ? applyOne(runId, files, runs.scope.home, wait) : discardOne(runId, files, wait));
  } catch (error) {
    const done = before.filter((answer) => answer.status === "applied" || answer.status === "discarded");
    // An AbortError stays one (its message cannot be set, and Esc is not a failure to explain).
    if (done.length === 0 || !(error instanceof Error) || error.name === "AbortError") throw error;
    const what = action === "apply" ? "applied" : "discarded";
    error.message = `${error.message} (before it, ${done.map((answer) => answer.runId).join(", ")} ${done.length === 1 ? "was" : "were"} ${what}: ${formatChangeAnswers(done, action).replace(/\n/g, " ")})`;
    throw error;
  }
}

/**
 * The files a run's kept changes touch, from its ref in the repository (as git lists them, whatever
 * their names hold), made printable; none when the run kept no changes or its ref is gone. A file to
 * review says why: `notes.md (a link to /home/u/.ssh/authorized_keys, out of the working tree)` is a
 * different change from a file called notes.md, and the person asked to apply it is told so.
 */
export async function keptChangeFiles(runs: RunStore, runId: string): Promise<string[]> {
  const kept = await keptChangesOf(runs, runId);
  if (!kept) return [];
  const listed = await runGit(["diff-tree", "-r", "-z", "--no-renames", "--name-only", kept.base, kept.commit], { cwd: kept.root });
  if (listed.code !== 0) return [];
  const notes = new Map((await filesToReview(kept.root, kept.base, kept.commit).catch(() => [])).map((note) => [note.path, note]));
  return nulFields(listed.stdout).map((path) => {
    const note = notes.get(path);
    return note ? reviewLine(note) : shownName(path);
  });
}

/** The files of a run's kept changes a person should review before running anything (see review-files.ts), made printable. */
export async function keptReviewLines(runs: RunStore, runId: string): Promise<string[]> {
  const kept = await keptChangesOf(runs, runId);
  return kept ? (await filesToReview(kept.root, kept.base, kept.commit).catch(() => [])).map(reviewLine) : [];
}

/** A run's kept changes (its repository, base and commit) while they are kept and readable. */
async function keptChangesOf(runs: RunStore, runId: string): Promise<{ root: string; base: string; commit: string } | undefined> {
  const record = readChangeRecord(runFiles(runs.scope, assertRunId(runId)));
  if (!record || record.state !== "kept" || !existsSync(record.root)) return undefined;
  const kept = await readChanges(record.root, runId);
  return kept ? { root: record.root, ...kept } : undefined;
}

/** A file to review as a line shows it: "path (why)", printable (a link's target is the child's text too). */
const reviewLine = (note: ReviewNote): string => shownName(`${note.path} (${note.why})`);

/**
 * The files an unfinished apply of the run was writing or deleting (its "applying" mark), made
 * printable; undefined when it has none. The mark may be an apply still under way in another process.
 */
export function unfinishedApplyFiles(runs: RunStore, runId: string): string[] | undefined {
  const record = readChangeRecord(runFiles(runs.scope, assertRunId(runId)));
  return record?.state === "applying" ? (record.touching ?? []).map(shownName) : undefined;
}

/** Where a run's kept changes stand (kept, applying, applied…); undefined for a run that kept none. */
export function changeStateOf(runs: RunStore, runId: string): ChangeRecord["state"] | undefined {
  return readChangeRecord(runFiles(runs.scope, assertRunId(runId)))?.state;
}

/**
 * A run's changes in a line, for `flow runs show`: counts, then where they stand and what the user
 * can do next; an apply that did not finish names the files it may have touched.
 */
export function describeChanges(runs: RunStore, runId: string, counts: { files: number; insertions: number; deletions: number }): string {
  const head = `${counts.files} file(s), +${counts.insertions} -${counts.deletions}`;
  const unfinished = unfinishedApplyFiles(runs, runId);
  if (unfinished) {
    return `${head}; its previous apply did not finish: the working tree may hold some of them and not others: ${nameList(unfinished)}. flow runs apply ${runId} finishes it when none of them changed since (or names those that did, and how to put a file back); flow runs discard ${runId} keeps the tree as it is.`;
  }
  switch (changeStateOf(runs, runId)) {
    case "applied":
      return `${head}; applied.`;
    case "discarded":
      return `${head}; discarded.`;
    case "unavailable":
      return `${head}; they could not be kept (see its diagnostics).`;
    default:
      return `${head}; kept, not applied: flow runs apply ${runId} merges them into the working tree.`;
  }
}


/** The checks `changeRuns` makes before touching anything, alone: /flow apply makes them before it asks the person. */
export function checkChangeRuns(runs: RunStore, action: ChangeAction, runIds: unknown): Promise<void> {
  return checkTargets(targetIds(runIds).map((runId) => ({ runs, runId })), action);
}

/** `changeTargets` for runs of one session, as external_runs names them. */
export function changeRuns(runs: RunStore, action: ChangeAction, runIds: unknown, wait: ChangeWait = {}): Promise<ChangeAnswer[]> {
  return changeTargets(targetIds(runIds).map((runId) => ({ runs, runId })), action, wait);
}

/** The line naming a run's files to review, for apply's answers and /flow apply's question. */
export const reviewWarning = (runId: string, lines: readonly string[]): string =>
  `REVIEW run ${runId}'s ${lines.length === 1 ? "file" : "files"} before running anything in the project: ${nameList(lines)}.`;

/** One line per run (and one more naming its files to review), for the tool's text, the CLI and /flow, in the words of the action asked. */
export function formatChangeAnswers(answers: readonly ChangeAnswer[], action: ChangeAction): string {
  const lines = answers.map(({ runId, status, files, moreFiles, reason }) => {
    // A child named these files: shown without the escapes a name can hold.
    const list = files && files.length > 0 ? `: ${nameList(files, moreFiles)}` : "";
    switch (status) {
      case "applied":
        return `Run ${runId}: applied to the working tree (nothing staged)${list}.`;
      case "conflict":
        return `Run ${runId}: conflict, nothing changed${list}${reason ? ` (not applied: ${reason})` : ""}.`;
      case "nothing_to_apply":
        return `Run ${runId}: nothing to ${action} (no changes kept).`;
      case "already_applied":
        return `Run ${runId}: already applied.`;
      case "discarded":
        return `Run ${runId}: changes discarded.`;
    }
  });
  // Every run's files to review come last, together: after its own list, another run's long one
  // scrolled a warning off the terminal before the person read it.
  const reviews = answers.flatMap(({ runId, review }) => (review ? [reviewWarning(runId, review.map(reviewLine))] : []));
  return [...lines, ...reviews].join("\n");
}
