// A cassette entry's `changes`: what a worktree child changed, as the git patch of its worktree
// against its base. Text when the patch is UTF-8 (a person can read and write it), `{ base64 }`
// when it is not (a text file in another encoding), so every byte survives the JSON line.
import { isUtf8 } from "node:buffer";
import { redactGitPatch } from "../runs/index.ts";
import { isRecord } from "./cli/guards.ts";

export type RecordedChanges = string | { base64: string };

// A file's header: git's own, or a plain unified diff's ---/+++ pair (git apply takes both).
const PATCH_START = /^diff --git |^--- .*\n\+\+\+ /m;
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;
const NOT_A_PATCH = 'changes must be a git patch of the child\'s worktree against its base (what git diff --binary writes: a "diff --git" line, or ---/+++ lines, per file)';

/** What is wrong with an entry's `changes`; empty when it is a patch replay can hand to git apply. */
export function changesProblems(changes: unknown): string[] {
  if (typeof changes === "string") return PATCH_START.test(changes) ? [] : [NOT_A_PATCH];
  if (!isRecord(changes) || Object.keys(changes).some((field) => field !== "base64") || typeof changes.base64 !== "string") {
    return ['changes must be a git patch (text), or { "base64": … } of one that is not UTF-8'];
  }
  if (!BASE64.test(changes.base64)) return ["changes.base64 is not base64"];
  return PATCH_START.test(Buffer.from(changes.base64, "base64").toString("latin1")) ? [] : [`${NOT_A_PATCH}, base64-encoded`];
}

/** The patch's bytes, as git apply takes them. */
export function patchBytes(changes: RecordedChanges): Buffer {
  return typeof changes === "string" ? Buffer.from(changes, "utf8") : Buffer.from(changes.base64, "base64");
}

/** A recorded patch as a cassette keeps it, and the binary files left out of it because their bytes hold a secret. */
export interface KeptChanges {
  /** Redacted, text when it is UTF-8, else base64; none when nothing is left to keep. */
  changes?: RecordedChanges;
  withheld: string[];
}

export function recordedChanges(patch: Buffer): KeptChanges {
  const utf8 = isUtf8(patch);
  // latin1 maps each byte to one character and back, and redaction writes only ASCII.
  const { text, withheld } = redactGitPatch(patch.toString(utf8 ? "utf8" : "latin1"), "drop");
  if (text === "") return { withheld };
  return { changes: utf8 ? text : { base64: Buffer.from(text, "latin1").toString("base64") }, withheld };
}
