// Before apply touches anything: every run whose changes it would merge must still have them. A
// child whose changes could not be kept, a ref deleted by hand, or a repository gone is a typed
// error naming the run, and its evidence (change record, patch view) is left as it was.
import { FlowError } from "../contract/errors.ts";
import { changesRef, readChanges } from "./changes.ts";
import type { ChangeRecord } from "./change-record.ts";
import { openRepository } from "./repository.ts";

const unreadable = (runId: string, why: string): FlowError =>
  new FlowError("run_unavailable", `Run ${runId}'s changes cannot be applied: ${why}. Nothing was applied; its patch view and diagnostics still show what it did.`);

/** Throws run_unavailable when the run's kept changes cannot be read from its repository. */
export async function assertChangesReadable(runId: string, record: ChangeRecord | null): Promise<void> {
  if (record?.state === "unavailable") throw unreadable(runId, `they could not be kept when it settled (${record.reason ?? "see its changes_unavailable diagnostic"})`);
  if (record?.state !== "kept") return; // nothing kept, applied or discarded: apply answers for those
  try {
    await openRepository(record.root);
  } catch (error) {
    throw unreadable(runId, `its repository can no longer be read (${(error as Error).message})`);
  }
  if (!(await readChanges(record.root, runId))) throw unreadable(runId, `${changesRef(runId)} is no longer in its repository (deleted by hand?); restoring that ref makes them applicable again`);
}
