import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile, groupCommit, redactedJson, redactText } from "../../runs/index.ts";
import { JsonAnswer, LIMIT_CEILINGS } from "../../../runtime/index.ts";

/**
 * A tools.* answer is journaled with its call, so a resumed run answers the call without running
 * it again. Answers are up to replyChars (4 MiB by default, 16 MiB at most) each, and a run makes
 * up to toolCalls (256, at most 4,096) of them: written whole into the journal they made it
 * gigabytes, which every reader of the run (inspect, the report, a resume's plan) reads. An answer
 * past KEPT_INLINE_CHARS of JSON goes to a file of its own beside the journal instead, redacted as
 * the journal line would have been, and the line keeps its size, hash and first characters. A
 * resume reads the file when it replays that call, and checks it against the hash.
 */
export const KEPT_INLINE_CHARS = 16 * 1024;

/** The first characters of a kept answer's JSON, on its journal line: enough to see what it was. */
const HEAD_CHARS = 1024;

/**
 * The most characters of JSON a kept answer's file holds: the highest replyChars any run may set.
 * An answer past it never reached a script (the sandbox refused it with a replyChars error), and a
 * tool may answer any size: its file keeps a marker, its size and its first characters instead, so
 * one answer cannot fill the disk. A resume hands the sandbox its size alone (CutAnswer), and the
 * script sees the same replyChars error it saw.
 */
export const MAX_KEPT_ANSWER_CHARS = LIMIT_CEILINGS.replyChars;

/** How much of a cut answer's JSON is redacted to give its head: far past the head, so a secret crossing its end is caught whole. */
const CUT_WINDOW_CHARS = 64 * 1024;

/** What a journal line says of an answer kept in a file: `file` is null when the file could not be written. */
export interface KeptAnswer {
  file: string | null;
  /** Characters of the answer's (redacted) JSON, and bytes of the file. */
  chars: number;
  bytes: number;
  sha256: string;
  head: string;
  /** Set when the answer was past MAX_KEPT_ANSWER_CHARS: its JSON's length as the sandbox measured it; the file holds a marker. */
  cut?: number;
}

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

/** The file name of call `index`'s answer: one per call, in the run's folder. */
const answerFile = (index: number): string => `tool-answer-${index}.json`;

/**
 * A cut answer read back on a resume: only its length and its (redacted) head are known. The
 * sandbox refuses it by that length, with the words the script saw, and it is kept again as cut.
 */
export class CutAnswer extends JsonAnswer {
  readonly head: string;
  constructor(chars: number, head: string) {
    super(undefined, chars);
    this.head = head;
  }
}

/**
 * An answer read back from its kept file on a resume: its text was redacted when the file was
 * written, so the resumed run keeps that text as it is, without redacting megabytes again.
 */
class RedactedAnswer extends JsonAnswer {}

/**
 * The answer's fields for its journal line: `value` when it is small, else `kept` (its file written
 * first, so a line that names a file is never before the file). `answer.text` is what measured it:
 * the JSON the sandbox is handed, so only the file's redacted copy is serialised here.
 */
export function keepAnswer(runDir: string, index: number, answer: JsonAnswer): { value: unknown } | { deeperThan: number } | { kept: KeptAnswer; receipt?: Record<string, unknown> } {
  // Nested past any run's valueDepth: every run refuses it, and it is kept as only that.
  if (answer.tooDeep) return { deeperThan: LIMIT_CEILINGS.valueDepth };
  const { value, text, chars: answerChars } = answer;
  // A small answer is redacted once, by the journal line that holds it.
  if (answerChars <= KEPT_INLINE_CHARS && !(answer instanceof CutAnswer)) return { value };
  const cut = answerChars > MAX_KEPT_ANSWER_CHARS || text === undefined;
  // A cut answer keeps only its head, so only a window around it is redacted (a secret that crosses
  // the head's end is inside the window): redacting all of a 17 MiB answer took seconds of the host.
  const whole =
    answer instanceof CutAnswer ? answer.head
    : cut ? redactText(text!.slice(0, CUT_WINDOW_CHARS)).text
    : answer instanceof RedactedAnswer ? text!
    : (redactedJson(value) ?? "null");
  const head = whole.slice(0, HEAD_CHARS);
  const json = cut ? cutMarker(answerChars, head) : whole;
  const file = answerFile(index);
  let written: string | null = file;
  try {
    atomicWriteFile(join(runDir, file), json, { durable: false });
    // Synced with the run's other files, before the journal's lines: its contents and the directory entry that names it.
    groupCommit().enqueue("final", join(runDir, file));
    groupCommit().enqueue("final", runDir);
  } catch {
    written = null; // the run goes on; a resume treats the call as unanswered
  }
  const receipt = receiptSummary(value);
  const kept: KeptAnswer = { file: written, chars: cut ? answerChars : json.length, bytes: Buffer.byteLength(json, "utf8"), sha256: sha256(json), head, ...(cut ? { cut: answerChars } : {}) };
  return { kept, ...(receipt ? { receipt } : {}) };
}

/** What a cut answer's file holds: a marker saying so, the answer's size, and its first (redacted) characters. */
function cutMarker(answerChars: number, head: string): string {
  const note = `this tools.* answer had ${answerChars} characters of JSON, more than a workflow's replyChars ever lets a script be handed (${MAX_KEPT_ANSWER_CHARS} at most): the script was refused it, and only its first ${HEAD_CHARS} characters are kept`;
  return JSON.stringify({ piFlowCutAnswer: { note, chars: answerChars, head } });
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * What the workflow's calls view reads of a pi-flow tool's receipt (whether it failed and why, its
 * action, the run it started), kept on the line when the receipt itself is kept in a file.
 */
function receiptSummary(value: unknown): Record<string, unknown> | undefined {
  if (!isObject(value) || value.contractVersion === undefined) return undefined;
  const run = isObject(value.data) && isObject(value.data.run) ? value.data.run : undefined;
  return {
    contractVersion: value.contractVersion,
    ok: value.ok,
    ...(value.action !== undefined ? { action: value.action } : {}),
    ...(value.error !== undefined ? { error: value.error } : {}),
    ...(typeof run?.runId === "string" ? { data: { run: { runId: run.runId } } } : {}),
  };
}

/** A kept answer as a journal line recorded it, if the line is one (checked field by field: the journal is a file). */
export function keptAnswerOf(data: unknown): KeptAnswer | undefined {
  if (data === null || typeof data !== "object") return undefined;
  const kept = (data as { kept?: unknown }).kept;
  if (kept === null || typeof kept !== "object") return undefined;
  const { file, chars, bytes, sha256: hash, head, cut } = kept as Record<string, unknown>;
  if ((file !== null && typeof file !== "string") || typeof chars !== "number" || typeof bytes !== "number" || typeof hash !== "string" || typeof head !== "string") return undefined;
  if (cut !== undefined && (typeof cut !== "number" || !Number.isSafeInteger(cut) || cut < 2)) return undefined;
  return { file, chars, bytes, sha256: hash, head, ...(cut !== undefined ? { cut } : {}) };
}

/** Whether the kept answer's file is there at its recorded size (a cheap check, before a resume starts). */
export function keptAnswerPresent(runDir: string, kept: KeptAnswer): boolean {
  // The name comes from a file: only a name this module writes, never a path elsewhere.
  if (kept.file === null || !/^tool-answer-\d+\.json$/.test(kept.file)) return false;
  try {
    return statSync(join(runDir, kept.file)).size === kept.bytes;
  } catch {
    return false;
  }
}

/** The kept answer's value, read back; undefined when its file is gone or is not what the journal hashed. */
export function readKeptAnswer(runDir: string, kept: KeptAnswer): { value: JsonAnswer } | undefined {
  if (!keptAnswerPresent(runDir, kept)) return undefined;
  try {
    const json = readFileSync(join(runDir, kept.file!), "utf8");
    if (sha256(json) !== kept.sha256) return undefined;
    // A cut answer is known by its length alone: the sandbox refuses it by that, as it did.
    if (kept.cut !== undefined) return kept.cut > MAX_KEPT_ANSWER_CHARS ? { value: new CutAnswer(kept.cut, kept.head) } : undefined;
    // The hash matched: the file is the JSON this module wrote.
    return { value: new RedactedAnswer(json) };
  } catch {
    return undefined;
  }
}
