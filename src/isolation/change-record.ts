// What a run's evidence says about its changes, beside its other files: the counts its receipt
// shows, whether they were applied or discarded, and the redacted patch the `patch` view pages.
import { writeFile } from "node:fs/promises";
import { atomicWriteFile, printable, readEvidenceText, redactGitPatch, redactText, type RunFiles } from "../runs/index.ts";

/** A run's kept changes in numbers: files changed, lines added and deleted (binary files count no lines). */
export interface ChangeStats {
  files: number;
  insertions: number;
  deletions: number;
}

/**
 * unavailable: the child's changes could not be kept (its `changes_unavailable` diagnostic says why).
 * applying: an apply began writing them into the working tree and has not said it finished; seen
 * under the repository lock, that apply was interrupted (see interruptedApply in apply-runs.ts).
 */
export type ChangeState = "kept" | "applying" | "applied" | "discarded" | "unavailable";

export interface ChangeRecord extends ChangeStats {
  state: ChangeState;
  /** The repository's working tree (private: never in a view). */
  root: string;
  /** unavailable: why, as the diagnostic said it. */
  reason?: string;
  /** applying: the files that apply was about to write or delete. */
  touching?: string[];
  /** applying: the commit of the user's tree as it was before that apply (see unfinished-apply.ts). */
  before?: string;
  /** applied: every file the apply wrote or deleted (its answer names only the first ones). */
  appliedFiles?: string[];
}

export function readChangeRecord(files: Pick<RunFiles, "changes">): ChangeRecord | null {
  try {
    const value = JSON.parse(readEvidenceText(files.changes)) as Partial<ChangeRecord>;
    const counts = [value.files, value.insertions, value.deletions].every((n) => typeof n === "number");
    return counts && typeof value.state === "string" && typeof value.root === "string" ? (value as ChangeRecord) : null;
  } catch {
    return null; // no changes, or a run without worktree isolation
  }
}

/**
 * Replaces the record whole and durably (temp file, fsync, rename): a crash while it is written
 * must leave the old record or the new one, never a torn file that reads as "no changes kept".
 */
export async function writeChangeRecord(files: Pick<RunFiles, "changes">, record: ChangeRecord): Promise<void> {
  // Why changes could not be kept is an error's text (git's, the file system's), which apply repeats
  // in a tool result: redacted like every other error pi-flow keeps. File names stay exact: apply reads them.
  const kept = record.reason === undefined ? record : { ...record, reason: redactText(record.reason).text };
  atomicWriteFile(files.changes, `${JSON.stringify(kept)}\n`, { durable: true });
}

/**
 * The patch as the view shows it: secrets redacted like every other view, binary data searched too
 * and withheld (with a note) when it holds one. The ref keeps the exact bytes.
 */
export function writePatch(files: Pick<RunFiles, "patch">, patch: string): Promise<void> {
  return writeFile(files.patch, redactGitPatch(patch, "note").text, { mode: 0o600 });
}

/**
 * What does not show as itself in a file name: controls (escapes, tabs, line breaks), format
 * characters (bidirectional overrides and isolates, zero-width ones, the soft hyphen, tag
 * characters), spaces other than the plain one, and the blank letters and selectors that look like
 * nothing. `evil\u202Etxt.sh` reads as `evilhs.txt` on a terminal, and with the override removed as
 * `eviltxt.sh`, a file that does not exist: either way the person asked to apply it is misled.
 */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u034f\u115f\u1160\u3164\uffa0\ufe00-\ufe0f\u{e0100}-\u{e01ef}]|(?! )\p{Zs}/gu;

/** A character that does not show as itself, shown by its code point. */
const codePoint = (character: string): string => `<U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`;

/**
 * A file name a child chose, as a line may show it: secrets redacted, and every character that
 * would not show as itself (an escape, a tab or line break faking another line, a bidirectional
 * override, a zero-width joiner) written as its code point, so the name reads as the file it is.
 */
export const shownName = (name: string): string => redactText(name).text.replace(UNSEEN, codePoint);

/** At most this many file names in one line of text: a child that wrote 50,000 files (an un-ignored node_modules) must not make an answer of megabytes. */
export const SHOWN_NAMES_MAX = 50;

/** Names for a line of text, made printable: the first SHOWN_NAMES_MAX, then how many more (`unlisted`: more still, not in `names`). */
export function nameList(names: readonly string[], unlisted = 0): string {
  const shown = names.slice(0, SHOWN_NAMES_MAX).map(shownName).join(", ");
  const more = Math.max(names.length - SHOWN_NAMES_MAX, 0) + unlisted;
  return more > 0 ? `${shown} and ${more} more` : shown;
}
