// A cassette entry's `changes`: what a worktree child changed, as the git patch of its worktree
// against its base. Text when the patch is UTF-8 (a person can read and write it), `{ base64 }`
// when it is not (a text file in another encoding), so every byte survives the JSON line.
import { isUtf8 } from "node:buffer";
import { redactText } from "../runs/index.ts";
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

// Each file's part of a patch; a binary file's part holds base85 data after this line.
const FILE_PART = /(?=^diff --git )/m;
const BINARY_DATA = "\nGIT binary patch\n";

/**
 * The patch with secrets redacted as every view redacts text, file by file. Binary data is kept
 * as git encoded it: redacting its base85 lines would only corrupt it, and they hold no text.
 */
function redactPatch(patch: string): string {
  return patch
    .split(FILE_PART)
    .map((part) => {
      const binary = part.indexOf(BINARY_DATA);
      return binary === -1 ? redactText(part).text : redactText(part.slice(0, binary)).text + part.slice(binary);
    })
    .join("");
}

/** A recorded patch as a cassette keeps it: redacted, text when it is UTF-8, else base64. */
export function recordedChanges(patch: Buffer): RecordedChanges {
  if (isUtf8(patch)) return redactPatch(patch.toString("utf8"));
  // latin1 maps each byte to one character and back, and redaction writes only ASCII.
  return { base64: Buffer.from(redactPatch(patch.toString("latin1")), "latin1").toString("base64") };
}
