/**
 * Best-effort secret redaction: the one place that decides what looks like a secret. It is applied
 * at the source, before text is measured, sliced or written, so page budgets hold and a secret
 * split across a page boundary is still caught. It is pattern matching, not a guarantee: arbitrary
 * sensitive prose gets through. The rule tables live in ./redact/; the generated corpus in
 * test/runs/fixtures/secret-corpus.ts pins both directions (secrets that must go, look-alikes that
 * must survive) and docs/runs.md states its recall and false-positive figures.
 */
import { types } from "node:util";
import { applySpans, findSecretSpans, redactString } from "./engine.ts";
import { isBasicCredential, isSecretKeyName, judgeValue } from "./keys.ts";
import { looksRandom, REDACTED } from "./rule.ts";

export { REDACTED };

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
class TwoGenerations {
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

/**
 * Shapes no rule finds a secret in, and that come unique with every entry of a transcript or child
 * (times, UUIDs, short hex ids, run IDs): passed through unscanned, and not remembered, so they cost nothing and
 * keep the memo for the texts that repeat. test/runs/redact-shapes.test.ts pins that they are unchanged.
 */
const PLAIN_SHAPE = /^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9a-f]{1,12}|(?:ag|wf)_[0-9a-z]{9}_[0-9a-z]{10})$/;

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
function redactedText(text: string): string {
  if (text.length <= 36 && PLAIN_SHAPE.test(text)) return text;
  if (text.length > SHARED_HEAD_MIN_CHARS && sharedHeads.length > 0) {
    const byHead = redactedByHead(text);
    if (byHead !== undefined) return byHead;
  }
  const remembered = text.length <= MEMO_MAX_CHARS;
  let out = remembered ? texts.recall(text) : undefined;
  if (out === undefined) {
    out = redactString(text);
    if (remembered) texts.remember(text, out);
  }
  return out;
}

/** The lines that open and close a PEM private key block (rules' PRIVATE_KEY, auth.ts). */
const KEY_MARKER = /-----(BEGIN|END) (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g;

/** Whether a text opens a private key block and does not end it. */
function opensKeyBlock(text: string): boolean {
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

/**
 * Deep-redact a JSON-like value: every string is redacted as text, and a string stored under a
 * secret-named key (`{ "password": "hunter2" }`) is replaced whole, since no pattern in the string
 * alone can tell. Returns a fresh JSON-safe copy (the canonical form: what JSON.stringify keeps).
 */
export function redactValue(value: unknown): { value: unknown; changed: boolean } {
  const json = JSON.stringify(value);
  if (json === undefined) return { value: undefined, changed: false };
  return redactParsed(json);
}

/**
 * `value` redacted as it would be under `key` in an object: a string stored under a secret name
 * (`store("db_password", pw)`) is replaced whole, as `{ "db_password": pw }` would have it.
 */
export function redactValueUnder(key: string, value: unknown): unknown {
  const { value: redacted } = redactValue({ [key]: value });
  return redacted === undefined ? undefined : Object.values(redacted as object)[0];
}

/**
 * `value` redacted and as one line of JSON: what a line of evidence writes. One pass, redacting each
 * string as JSON.stringify reaches it (after any toJSON, so exactly the strings the line holds), with
 * the same rules as `walk`: no parsed copy is made, and a text that repeats is the same string each
 * time, so the memo finds it without hashing a fresh copy.
 */
export function redactedJson(value: unknown): string | undefined {
  const outer = { rekeyed, listNames, openKeyBlocks, pairNames };
  // This call's own: JSON.stringify may run a toJSON that serialises another value.
  rekeyed = undefined;
  listNames = undefined;
  openKeyBlocks = undefined;
  pairNames = undefined;
  try {
    return JSON.stringify(value, redactingReplacer);
  } finally {
    ({ rekeyed, listNames, openKeyBlocks, pairNames } = outer);
  }
}

/**
 * The copies with redacted keys made in the current redactedJson call, by original: an object met
 * again is given the same copy, so JSON.stringify still sees a cycle as one (and says so at once).
 */
let rekeyed: WeakMap<object, object> | undefined;

/**
 * In the current redactedJson call, the secret name each list is being written under, as `walk`
 * judges a list's items under the key that holds the list. JSON.stringify writes depth first, so
 * the name set when a list is reached holds while its items are written; a list met again under
 * another key is named anew.
 */
let listNames: WeakMap<object, string> | undefined;

/** In the current redactedJson call, the lists whose items written so far opened a private key block and did not end it. */
let openKeyBlocks: WeakSet<object> | undefined;

/** In the current redactedJson call, the secret name each name/value pair (see pairName) gives its value. */
let pairNames: WeakMap<object, string> | undefined;

/** The fields of a name/value pair (keys.ts's NAME_VALUE reads the same pairs in text). */
const PAIR_NAME_FIELD = /^(?:name|key|parameterkey)$/i;
const PAIR_VALUE_FIELD = /^(?:value|parametervalue)$/i;

/**
 * The secret name a name/value pair gives its value (`{ "name": "DB_PASSWORD", "value": "…" }`:
 * a Kubernetes or ECS env entry, an AWS parameter), or undefined when it is no such pair. The value
 * is then judged as one stored under that name.
 */
function pairName(record: object): string | undefined {
  const fields = record as Record<string, unknown>;
  let name: string | undefined;
  let valued = false;
  for (const field of Object.keys(record)) {
    if (PAIR_VALUE_FIELD.test(field)) valued = true;
    else if (name === undefined && PAIR_NAME_FIELD.test(field)) {
      const given = fields[field];
      const text = typeof given === "string" ? given : given !== null && typeof given === "object" ? writtenAsPrimitive(given) : undefined;
      if (typeof text === "string" && keyVerdict(text) === "secret") name = text;
    }
  }
  return valued ? name : undefined;
}

function redactingReplacer(this: unknown, key: string, value: unknown): unknown {
  const inList = Array.isArray(this);
  // An array's items are keyed by index: they are judged by the name of the key holding the array.
  // A pair's value is judged by the pair's name.
  const name = inList ? listNames?.get(this as object) : ((PAIR_VALUE_FIELD.test(key) ? pairNames?.get(this as object) : undefined) ?? key);
  let written: unknown = value;
  if (value !== null && typeof value === "object") {
    written = writtenAsPrimitive(value);
    if (written === undefined) {
      if (!Array.isArray(value)) {
        const record = withRedactedKeys(value, (rekeyed ??= new WeakMap()));
        const named = pairName(record);
        if (named !== undefined) (pairNames ??= new WeakMap()).set(record, named);
        return record;
      }
      if (!inList && keyVerdict(key) !== "plain") (listNames ??= new WeakMap()).set(value, key);
      else listNames?.delete(value);
      return value;
    }
  }
  if (typeof written === "number") return name !== undefined && numberUnderKey(name, written) ? REDACTED : value;
  if (typeof written !== "string") return value;
  if (inList) {
    // Items are written in order: a list of a key's lines is redacted as the key's text would be.
    const list = this as object;
    const open = openKeyBlocks?.has(list) ?? false;
    const next = open ? continueKeyBlock(written, true) : undefined;
    if (next?.open ?? opensKeyBlock(written)) (openKeyBlocks ??= new WeakSet()).add(list);
    else openKeyBlocks?.delete(list);
    if (next) return next.text;
  }
  if (name !== undefined && written !== REDACTED && secretUnderKey(name, written)) return REDACTED;
  return redactedText(written);
}

/** Objects JSON.stringify writes as text after the replacer has seen them: raw JSON text (`JSON.rawJSON`). */
const rawJson = JSON as unknown as { isRawJSON?: (value: unknown) => value is { rawJSON: string } };

/**
 * The text or number JSON.stringify writes for an object that is not written as an object: a
 * String or Number object (`new String("…")`, of any realm and whatever its prototype) or raw JSON
 * text holding a string or a number. Such a value reaches the replacer as an object and leaves it
 * as text or a number, so it is judged here, as a parsed copy's would be. All are told by brand,
 * which no prototype or tag can fake; the text is `String(value)`, what JSON itself would write
 * (a `toString` of its own included), the number `Number(value)`.
 */
function writtenAsPrimitive(value: object): string | number | undefined {
  if (Array.isArray(value)) return undefined;
  if (types.isStringObject(value)) return String(value);
  if (types.isNumberObject(value)) return Number(value);
  if (rawJson.isRawJSON?.(value)) {
    const parsed: unknown = JSON.parse(value.rawJSON);
    return typeof parsed === "string" || typeof parsed === "number" ? parsed : undefined;
  }
  return undefined;
}

function redactParsed(json: string): { value: unknown; changed: boolean } {
  const state = { changed: false };
  const walked = walk(JSON.parse(json) as unknown, state);
  return { value: walked, changed: state.changed };
}

/**
 * What a key name says about the string under it. Names come from a small vocabulary (`type`,
 * `text`, `id`, `timestamp`…) and every string of every line is judged by its key, so the verdict
 * is remembered by name; the memo forgets everything when full, so odd names cannot grow it.
 */
type KeyVerdict = "auth" | "authorization" | "cookie" | "secret" | "plain";
const KEY_VERDICTS_MAX = 4096;
const keyVerdicts = new Map<string, KeyVerdict>();

function keyVerdict(key: string): KeyVerdict {
  let verdict = keyVerdicts.get(key);
  if (verdict === undefined) {
    const lower = key.toLowerCase();
    verdict = lower === "auth" ? "auth" : AUTHORIZATION_KEY.test(lower) ? "authorization" : COOKIE_KEY.test(lower) ? "cookie" : isSecretKeyName(key) ? "secret" : "plain";
    if (keyVerdicts.size >= KEY_VERDICTS_MAX) keyVerdicts.clear();
    keyVerdicts.set(key, verdict);
  }
  return verdict;
}

/** An HTTP authorization header's name, as a request's headers object keys it. */
const AUTHORIZATION_KEY = /^(?:proxy-)?authorization$/;
/** A cookie header's name, as a request's or response's headers object keys it. */
const COOKIE_KEY = /^(?:set-)?cookie$/;
/** A header value that names its scheme: whatever follows is the credential. */
const SCHEMED_CREDENTIAL = /^(?:bearer|token|bot|ssws|api-?key|key|oauth|splunk|geniekey|basic|digest|negotiate)\s+\S{8,}/i;

/** A string under this key is a secret as a whole (judged like a quoted value: placeholders survive). */
function secretUnderKey(key: string, item: string): boolean {
  const verdict = keyVerdict(key);
  if (verdict === "auth") return isBasicCredential(item); // Docker's config.json
  // As the `Authorization:` header line is judged (auth.ts): a scheme and a value, or a long random value.
  if (verdict === "authorization") return SCHEMED_CREDENTIAL.test(item) || (item.length >= 16 && looksRandom(item));
  // As the `Cookie:` header line is judged: a value holding a session cookie goes whole.
  if (verdict === "cookie") return redactString(`Cookie: ${item}`) !== `Cookie: ${item}`;
  return verdict === "secret" && judgeValue({ key, op: ":", spaced: false, value: JSON.stringify(item), endsLine: true });
}

/**
 * A number under this key is a secret as `password: 83749212` is in text: a numeric password or
 * PIN read from YAML arrives as a number. Small numbers (a port, `pin: 1234`) survive, as in text.
 */
function numberUnderKey(key: string, item: number): boolean {
  return Number.isFinite(item) && keyVerdict(key) === "secret" && judgeValue({ key, op: ":", spaced: false, value: String(item), endsLine: true });
}

/** A list under a secret name holds secrets as the name would hold one: `{ "password": ["…"] }`. */
function itemUnderKey(key: string, item: unknown): boolean {
  if (typeof item === "string") return item !== REDACTED && secretUnderKey(key, item);
  return typeof item === "number" && numberUnderKey(key, item);
}

/** `items` itself when no item is a secret under `key`, else a copy with those items redacted. */
function itemsUnderKey(key: string, items: unknown[]): unknown[] {
  if (keyVerdict(key) === "plain" || !items.some((item) => itemUnderKey(key, item))) return items;
  return items.map((item) => (itemUnderKey(key, item) ? REDACTED : item));
}

/**
 * Key names redacted as text, remembered by name in two generations of their own: an object with
 * thousands of keys neither empties this memo nor pushes long texts out of the texts' memo. Long
 * names are not remembered.
 */
const KEY_MEMO_MAX_CHARS = 256;
const keyNames = new TwoGenerations(4096, 4096 * KEY_MEMO_MAX_CHARS);

function redactedKey(key: string): string {
  let out = keyNames.recall(key);
  if (out === undefined) {
    out = key.length <= 36 && PLAIN_SHAPE.test(key) ? key : redactString(key);
    if (key.length <= KEY_MEMO_MAX_CHARS) keyNames.remember(key, out);
  }
  return out;
}

/**
 * `record` itself when no key of it holds a secret, else a copy whose keys are redacted (a value a
 * script builds may be keyed by anything, a token included), in the same order. Two keys that
 * redact alike stay two: the later ones are numbered.
 */
function withRedactedKeys(record: object, copies?: WeakMap<object, object>): object {
  const made = copies?.get(record);
  if (made !== undefined) return made;
  const keys = Object.keys(record);
  const values = record as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const clean = redactedKey(key);
    if (copy === undefined) {
      if (clean === key) continue;
      copy = {};
      for (let j = 0; j < i; j++) defineData(copy, keys[j]!, values[keys[j]!]);
    }
    let name = clean;
    for (let n = 2; Object.hasOwn(copy, name); n++) name = `${clean} (${n})`;
    defineData(copy, name, values[key]);
  }
  if (copy === undefined) return record;
  copies?.set(record, copy);
  return copy;
}

/** defineProperty, not assignment: a "__proto__" key must stay data, not a prototype. */
function defineData(record: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Redacts the strings of a freshly parsed JSON value in place: the parse made it, so no one else
 * holds it, and an entry with nothing to redact (the common case) costs no copy. An object with a
 * key to redact is replaced by a copy with redacted keys.
 */
function walk(value: unknown, state: { changed: boolean }): unknown {
  if (typeof value === "string") {
    const out = redactedText(value);
    if (out !== value) state.changed = true;
    return out;
  }
  if (Array.isArray(value)) {
    let keyBlock = false; // as the one-pass line reads a list of a key's lines: see continueKeyBlock
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === "string") {
        const next: KeyBlockText | undefined = keyBlock ? continueKeyBlock(item, true) : undefined;
        keyBlock = next?.open ?? opensKeyBlock(item);
        value[i] = next ? next.text : walk(item, state);
        if (value[i] !== item) state.changed = true;
      } else if (item !== null && typeof item === "object") value[i] = walk(item, state);
    }
    return value;
  }
  if (value !== null && typeof value === "object") {
    const record = withRedactedKeys(value) as Record<string, unknown>;
    if (record !== value) state.changed = true;
    const named = pairName(record);
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (typeof item === "string" || typeof item === "number") {
        const under = named !== undefined && PAIR_VALUE_FIELD.test(key) ? named : key;
        const next = itemUnderKey(under, item) ? REDACTED : walk(item, state);
        if (next !== item) {
          state.changed = true;
          defineData(record, key, next);
        }
      } else if (item !== null && typeof item === "object") {
        const items = Array.isArray(item) ? itemsUnderKey(key, item) : item;
        if (items !== item) state.changed = true;
        const next = walk(items, state);
        if (next !== item) defineData(record, key, next);
      }
    }
    return record;
  }
  return value;
}
