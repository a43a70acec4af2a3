// What a run's evidence says about its changes, beside its other files: the counts its receipt
// shows, whether they were applied or discarded, and the redacted patch the `patch` view pages.
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { redactText } from "../runs/index.ts";
import type { ChangeStats } from "./changes.ts";

export type ChangeState = "kept" | "applied" | "discarded";

export interface ChangeRecord extends ChangeStats {
  state: ChangeState;
  /** The repository's working tree (private: never in a view). */
  root: string;
}

export const changeRecordFile = (runDir: string): string => join(runDir, "changes.json");
export const patchFile = (runDir: string): string => join(runDir, "patch.diff");

export function readChangeRecord(runDir: string): ChangeRecord | null {
  try {
    const value = JSON.parse(readFileSync(changeRecordFile(runDir), "utf8")) as Partial<ChangeRecord>;
    const counts = [value.files, value.insertions, value.deletions].every((n) => typeof n === "number");
    return counts && typeof value.state === "string" && typeof value.root === "string" ? (value as ChangeRecord) : null;
  } catch {
    return null; // no changes, or a run without worktree isolation
  }
}

export function writeChangeRecord(runDir: string, record: ChangeRecord): Promise<void> {
  return writeFile(changeRecordFile(runDir), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

/** The patch as the view shows it: secrets redacted like every other view (the ref keeps the exact bytes). */
export function writePatch(runDir: string, patch: string): Promise<void> {
  return writeFile(patchFile(runDir), redactText(patch).text, { mode: 0o600 });
}

/** The redacted patch, or null when the run kept none. */
export function readPatch(runDir: string): string | null {
  try {
    return readFileSync(patchFile(runDir), "utf8");
  } catch {
    return null;
  }
}
