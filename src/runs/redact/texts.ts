/**
 * Redacting one text: the memo of texts seen before, shared heads (a long text many later texts
 * begin with), and a private key handed on over several texts. index.ts redacts values with it.
 */
import { applySpans, deeperRedactionReadings, findSecretSpans, redactString } from "./engine.ts";
import { REDACTED } from "./rule.ts";

/**
 * Texts come back again and again: short ones (a role, a harness, a model, a tool name, the
 * project's path: about thirty strings per child, nine in ten seen before) and long ones (every pi
 * child's session holds the same system prompt sections and tool descriptions, kilobytes each).
 * Their redacted form is remembered within a count and a size, in two generations: the texts seen
 * since the last turnover, and those of the one before. A text found in the older generation moves
 * to the newer; when the newer is full it becomes the older and the older is forgotten whole. That
 * keeps what is used again without reordering anything on a hit (a Map kept in LRU order by delete
 * and re-insert cost more than the lookups it saved). Redaction is a function of the text alone.
 * A child's answer is written twice, to its output log and in its Pi session; up to a quarter of a
 * generation, it is remembered, so a long answer is scanned once for both.
 */
const MEMO_MAX_CHARS = 512 * 1024;

/** Redacted forms by their source, in the two generations described above. */
export class TwoGenerations {
  private readonly maxEntries: number;
  private readonly maxChars: number;
  private recent = new Map<string, string>();
  private recentChars = 0;
  private older = new Map<string, string>();

  constructor(maxEntries: number, maxChars: number) {
    this.maxEntries = maxEntries;
    this.maxChars = maxChars;
  }

  recall(source: string): string | undefined {
    const hit = this.recent.get(source);
    if (hit !== undefined) return hit;
    const old = this.older.get(source);
    if (old !== undefined) this.remember(source, old);
    return old;
  }

  remember(source: string, redacted: string): void {
    const size = source.length + (redacted === source ? 0 : redacted.length);
    if (this.recent.size >= this.maxEntries || this.recentChars + size > this.maxChars) {
      this.older = this.recent;
      this.recent = new Map();
      this.recentChars = 0;
    }
    this.recent.set(source, redacted);
    this.recentChars += size;
  }
}

const texts = new TwoGenerations(2048, 2 * 1024 * 1024);
/** Short texts that only the gates read (see redactedText), remembered apart. */
const CHEAP_MAX_CHARS = 256;
const cheapTexts = new TwoGenerations(2048, 2048 * CHEAP_MAX_CHARS);

/**
 * Shapes no rule finds a secret in, and that come unique with every entry of a transcript or child
 * (times, UUIDs, short hex ids, run IDs): passed through unscanned, and not remembered, so they cost nothing and
 * keep the memo for the texts that repeat. test/runs/redact-shapes.test.ts pins that they are unchanged.
 */
export const PLAIN_SHAPE = /^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9a-f]{1,12}|(?:ag|wf)_[0-9a-z]{9}_[0-9a-z]{10})$/;

export function redactText(text: string): { text: string; changed: boolean } {
  const out = redactedText(text);
  return { text: out, changed: out !== text };
}

/**
 * A long text that many later texts begin with: a `full` child's prompt is its parent's
 * conversation (up to 4 Mi characters, the same for every child of a call) and then its own task,
 * and the journal's start line and the child's Pi session both hold that prompt. Such a text is
 * redacted once, and a text that begins with it has only its remainder scanned. That equals
 * redacting the whole only if no secret runs across the join: a head whose own secrets reach its
 * last character (a private key block with no end, which runs to the end of the text) is not used,
 * and the caller joins at a delimiter no rule reads across (test/runs/redact-shared-head.test.ts
 * checks the corpus both ways).
 */
interface SharedHead {
  readonly head: string;
  /** Its redacted form once a text has begun with it; null when a secret reaches its end. */
  redacted?: string | null;
}

/** The few heads in use (one per selection of a call's snapshot), most recent first. */
const MAX_SHARED_HEADS = 4;
const SHARED_HEAD_MIN_CHARS = 4096;
const sharedHeads: SharedHead[] = [];

/** Declare that texts beginning with `head` will follow (see SharedHead); short heads are not worth it. */
export function rememberSharedHead(head: string): void {
  if (head.length < SHARED_HEAD_MIN_CHARS || sharedHeads.some((known) => known.head === head)) return;
  sharedHeads.unshift({ head });
  sharedHeads.length = Math.min(sharedHeads.length, MAX_SHARED_HEADS);
}

/** `text` redacted by its shared head and its own remainder, or undefined when no head applies. */
function redactedByHead(text: string): string | undefined {
  for (const shared of sharedHeads) {
    if (text.length <= shared.head.length || !beginsWith(text, shared.head)) continue;
    if (shared.redacted === undefined) {
      const wraps: number[] = [];
      const spans = findSecretSpans(shared.head, wraps);
      const reachesEnd = spans.some((end, i) => i % 2 === 1 && end >= shared.head.length);
      shared.redacted = reachesEnd ? null : applySpans(shared.head, spans, wraps);
    }
    if (shared.redacted === null) return undefined;
    const rest = text.slice(shared.head.length);
    const restOut = redactedText(rest);
    // Unchanged, the text itself: a caller's `out !== text` then costs no comparison of megabytes.
    return shared.redacted === shared.head && restOut === rest ? text : shared.redacted + restOut;
  }
  return undefined;
}

/**
 * `text.startsWith(head)`, in the time of a memory comparison: a slice of a flat string is a view,
 * and equality of two flat strings is one compare, where startsWith walks character by character
 * (a millisecond for a 280 KB conversation).
 */
function beginsWith(text: string, head: string): boolean {
  return text.charCodeAt(head.length - 1) === head.charCodeAt(head.length - 1) && text.slice(0, head.length) === head;
}

/** `text` redacted: itself when nothing in it was a secret. */
export function redactedText(text: string): string {
  if (text.length <= 36 && PLAIN_SHAPE.test(text)) return text;
  if (text.length > SHARED_HEAD_MIN_CHARS && sharedHeads.length > 0) {
    const byHead = redactedByHead(text);
    if (byHead !== undefined) return byHead;
  }
  const remembered = text.length <= MEMO_MAX_CHARS;
  const short = text.length <= CHEAP_MAX_CHARS;
  let out = remembered ? ((short ? cheapTexts.recall(text) : undefined) ?? texts.recall(text)) : undefined;
  if (out === undefined) {
    const deeper = deeperRedactionReadings();
    out = redactString(text);
    // A short text only the gates read (an item of a list of 200,000 such) is remembered apart:
    // a flood of them turns over only their own memo, not the one of the texts that cost a reading.
    if (short && out === text && deeperRedactionReadings() === deeper) cheapTexts.remember(text, out);
    else if (remembered) texts.remember(text, out);
  }
  return out;
}

/** The lines that open and close a PEM private key block (rules' PRIVATE_KEY, auth.ts). */
const KEY_MARKER = /-----(BEGIN|END) (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g;

/** Whether a text opens a private key block and does not end it. */
export function opensKeyBlock(text: string): boolean {
  if (!text.includes("PRIVATE KEY")) return false;
  let open = false;
  for (const marker of text.matchAll(KEY_MARKER)) open = marker[1] === "BEGIN";
  return open;
}

/** A line of a key block's body: base64, a PEM header (`Proc-Type: …`, `DEK-Info: …`), or blank. */
const KEY_BODY_LINE = /^[ \t]*(?:[A-Za-z0-9+/=]*|(?:Proc-Type|DEK-Info|Comment):[^\n]*)[ \t]*\r?$/;
const KEY_END = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/;

/** A text as written, and whether a private key block is open after it. */
export interface KeyBlockText {
  text: string;
  open: boolean;
}

/**
 * `text` redacted when the texts before it left a private key block open (`open`), and whether one
 * is open after it. A key handed on line by line (a script that prints or stores a file's lines)
 * reaches redaction as many texts: each alone shows no rule its body. So the lines that follow an
 * opening line are the key's, one [REDACTED] up to and with its end line, as long as they look
 * like a key's lines: the first that does not (prose about the format) ends the block there.
 */
export function continueKeyBlock(text: string, open: boolean): KeyBlockText {
  if (!open) {
    const clean = redactedText(text);
    return { text: clean, open: opensKeyBlock(text) };
  }
  for (let at = 0; ; ) {
    const newline = text.indexOf("\n", at);
    const line = text.slice(at, newline === -1 ? text.length : newline);
    const end = KEY_END.exec(line);
    if (end || !KEY_BODY_LINE.test(line)) {
      const rest = end ? text.slice(at + end.index + end[0].length) : text.slice(at);
      const after = continueKeyBlock(rest, false);
      return { text: (end || at > 0 ? REDACTED : "") + (end || at === 0 ? "" : "\n") + after.text, open: after.open };
    }
    if (newline === -1) return { text: REDACTED, open: true };
    at = newline + 1;
  }
}
