// external_runs apply and discard: a worktree run's kept changes land on the user's working tree
// (3-way, all or nothing per run, in the order given) or are dropped. Every target is checked
// before any is touched: unknown or another session's run is run_unavailable, an unfinished one
// request_invalid.
import { existsSync } from "node:fs";
import { FlowError } from "../contract/errors.ts";
import { assertRunId, printable, runFiles, type RunStore } from "../runs/index.ts";
import { applyChanges } from "./apply.ts";
import { dropChanges, readChanges } from "./changes.ts";
import { nulFields, runGit } from "./git.ts";
import { readChangeRecord, writeChangeRecord, type ChangeRecord } from "./change-record.ts";
import { assertChangesReadable } from "./readable-changes.ts";
import { openRepository } from "./repository.ts";
import { withRepositoryLock } from "./repository-lock.ts";

export type ChangeAction = "apply" | "discard";

export interface ChangeAnswer {
  runId: string;
  status: "applied" | "conflict" | "nothing_to_apply" | "already_applied" | "discarded";
  /** applied: the files written or deleted; conflict: the files that conflict (nothing was changed). */
  files?: string[];
}

export const MAX_CHANGE_TARGETS = 100;

/** The run IDs of a call: 1 to 100, well formed, none twice. */
export function targetIds(runIds: unknown): string[] {
  if (!Array.isArray(runIds) || runIds.length === 0) throw new FlowError("request_invalid", "runIds must name at least one run.");
  if (runIds.length > MAX_CHANGE_TARGETS) throw new FlowError("request_invalid", `At most ${MAX_CHANGE_TARGETS} runIds per call; got ${runIds.length}.`);
  const ids = runIds.map(assertRunId);
  if (new Set(ids).size !== ids.length) throw new FlowError("request_invalid", "runIds lists a run more than once.");
  return ids;
}

async function applyOne(runId: string, files: ReturnType<typeof runFiles>, record: ChangeRecord): Promise<ChangeAnswer> {
  const repo = await openRepository(record.root);
  const outcome = await withRepositoryLock(repo.commonDir, () => applyChanges(repo, runId));
  if (outcome.status === "conflict") return { runId, status: "conflict", files: outcome.files };
  await writeChangeRecord(files, { ...record, state: "applied" });
  await dropChanges(repo.root, runId);
  return outcome.status === "applied" ? { runId, status: "applied", files: outcome.files } : { runId, status: "nothing_to_apply" };
}

async function discardOne(runId: string, files: ReturnType<typeof runFiles>, record: ChangeRecord): Promise<ChangeAnswer> {
  // A repository deleted outright took the run's ref with it: there is nothing left to drop.
  if (existsSync(record.root)) {
    try {
      await dropChanges(record.root, runId);
    } catch (error) {
      throw new FlowError("run_unavailable", `Run ${runId}'s changes could not be discarded: ${(error as Error).message}. Nothing was changed.`);
    }
  }
  await writeChangeRecord(files, { ...record, state: "discarded" });
  return { runId, status: "discarded" };
}

/** One run to apply or discard, and the run store (session) that holds it. */
export interface ChangeTarget {
  runs: RunStore;
  runId: string;
}

/** Every target checked, none touched: unknown or another session's run, a workflow, an unfinished or unreadable run. */
async function checkTargets(targets: readonly ChangeTarget[], action: ChangeAction): Promise<void> {
  for (const { runs, runId } of targets) {
    const view = runs.view(runId); // run_unavailable for an unknown run or another session's
    if (view.kind !== "agent") throw new FlowError("request_invalid", `Run ${runId} is a workflow; ${action} its agent runs (children) instead. Nothing was ${action === "apply" ? "applied" : "discarded"}.`);
    if (view.state.status !== "done") throw new FlowError("request_invalid", `Run ${runId} has not finished; ${action} it once it is done. Nothing was ${action === "apply" ? "applied" : "discarded"}.`);
  }
  if (action === "apply") for (const { runs, runId } of targets) await assertChangesReadable(runId, readChangeRecord(runFiles(runs.scope, runId)));
}

/**
 * Applies (or discards) each target's kept changes in order, once every target has been checked;
 * one run's conflict does not stop the next. Targets may come from several sessions (the shell).
 */
export async function changeTargets(targets: readonly ChangeTarget[], action: ChangeAction): Promise<ChangeAnswer[]> {
  await checkTargets(targets, action);
  const answers: ChangeAnswer[] = [];
  for (const { runs, runId } of targets) {
    const files = runFiles(runs.scope, runId);
    const record = readChangeRecord(files);
    if (!record || record.state === "discarded" || record.state === "unavailable") answers.push({ runId, status: "nothing_to_apply" });
    else if (record.state === "applied") answers.push({ runId, status: "already_applied" });
    else answers.push(await changeOne(action, runId, files, record, answers));
  }
  return answers;
}

/** One run's change; a failure after others already changed the working tree names them, so nobody believes nothing was. */
async function changeOne(action: ChangeAction, runId: string, files: ReturnType<typeof runFiles>, record: ChangeRecord, before: readonly ChangeAnswer[]): Promise<ChangeAnswer> {
  try {
    return await (action === "apply" ? applyOne : discardOne)(runId, files, record);
  } catch (error) {
    const done = before.filter((answer) => answer.status === "applied" || answer.status === "discarded");
    if (done.length === 0 || !(error instanceof Error)) throw error;
    const what = action === "apply" ? "applied" : "discarded";
    error.message = `${error.message} (before it, ${done.map((answer) => answer.runId).join(", ")} ${done.length === 1 ? "was" : "were"} ${what}: ${formatChangeAnswers(done, action).replace(/\n/g, " ")})`;
    throw error;
  }
}

/**
 * The files a run's kept changes touch, from its ref in the repository (as git lists them, whatever
 * their names hold), made printable; none when the run kept no changes or its ref is gone.
 */
export async function keptChangeFiles(runs: RunStore, runId: string): Promise<string[]> {
  const record = readChangeRecord(runFiles(runs.scope, assertRunId(runId)));
  if (!record || record.state !== "kept" || !existsSync(record.root)) return [];
  const kept = await readChanges(record.root, runId);
  if (!kept) return [];
  const listed = await runGit(["diff-tree", "-r", "-z", "--no-renames", "--name-only", kept.base, kept.commit], { cwd: record.root });
  return listed.code === 0 ? nulFields(listed.stdout).map(shownName) : [];
}

/** A file name a child chose, as a line may show it: no escapes, and no tab or line break to fake another line. */
const shownName = (name: string): string => printable(name).replace(/[\t\n]/g, " ");

/** `changeTargets` for runs of one session, as external_runs names them. */
export function changeRuns(runs: RunStore, action: ChangeAction, runIds: unknown): Promise<ChangeAnswer[]> {
  return changeTargets(targetIds(runIds).map((runId) => ({ runs, runId })), action);
}

/** One line per run, for the tool's text, the CLI and /flow, in the words of the action asked. */
export function formatChangeAnswers(answers: readonly ChangeAnswer[], action: ChangeAction): string {
  return answers
    .map(({ runId, status, files }) => {
      // A child named these files: shown without the escapes a name can hold.
      const list = files && files.length > 0 ? `: ${files.map(shownName).join(", ")}` : "";
      switch (status) {
        case "applied":
          return `Run ${runId}: applied to the working tree (nothing staged)${list}.`;
        case "conflict":
          return `Run ${runId}: conflict, nothing changed${list}.`;
        case "nothing_to_apply":
          return `Run ${runId}: nothing to ${action} (no changes kept).`;
        case "already_applied":
          return `Run ${runId}: already applied.`;
        case "discarded":
          return `Run ${runId}: changes discarded.`;
      }
    })
    .join("\n");
}
