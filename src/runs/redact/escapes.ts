/**
 * Escaped views of a text. A secret inside a JSON string that is itself inside a JSON string (a
 * tool call's arguments rendered into a child's prompt, a diagnostics line holding `{"content":
 * "{\"apiKey\": \"…\"}"}`) reaches redaction as `{\"apiKey\": \"…\"}` or `\\\"…\\\"`. Patterns
 * written for plain text do not see a key and its quoted value there. Rather than teach every
 * pattern every quoting depth, redaction also scans a decoded view of the text (one level of
 * backslash escapes undone), and a view of that view, and maps each match back to the original.
 */

/** The decoded text, and for each of its UTF-16 units the index in the source where it came from. */
export interface EscapeView {
  readonly text: string;
  /** `origin[i]` is where unit `i` starts in the source; `origin[text.length]` is the source length. */
  readonly origin: Int32Array;
}

/** Escapes that carry structure: quotes and backslashes (the nesting), `/` and `\u` (JSON writers). */
const HAS_ESCAPE = /\\["'\\/u]/;

const SIMPLE: Readonly<Record<string, string>> = {
  '"': '"',
  "'": "'",
  "\\": "\\",
  "/": "/",
  n: "\n",
  r: "\r",
  t: "\t",
  b: "\b",
  f: "\f",
};

const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * Undo one level of JSON-style backslash escapes. Unknown escapes (`\d`, a Windows path's `\U`)
 * are kept as they are. Returns null when the text holds no structural escape: there is nothing
 * new to see. Linear in the text.
 */
export function unescapeOnce(source: string): EscapeView | null {
  if (!HAS_ESCAPE.test(source)) return null;
  const parts: string[] = [];
  const origin = new Int32Array(source.length + 1);
  let length = 0;
  let from = 0;
  const copy = (start: number, end: number): void => {
    if (end <= start) return;
    parts.push(source.slice(start, end));
    for (let i = start; i < end; i++) origin[length++] = i;
  };
  let at = source.indexOf("\\");
  while (at !== -1 && at + 1 < source.length) {
    copy(from, at);
    const next = source[at + 1]!;
    const simple = SIMPLE[next];
    if (simple !== undefined) {
      parts.push(simple);
      origin[length++] = at;
      from = at + 2;
    } else if (next === "u" && HEX4.test(source.slice(at + 2, at + 6))) {
      parts.push(String.fromCharCode(Number.parseInt(source.slice(at + 2, at + 6), 16)));
      origin[length++] = at;
      from = at + 6;
    } else {
      // Not an escape we decode: keep the backslash, and let the next character start fresh.
      copy(at, at + 1);
      from = at + 1;
    }
    at = source.indexOf("\\", from);
  }
  copy(from, source.length);
  origin[length] = source.length;
  return { text: parts.join(""), origin: origin.subarray(0, length + 1) };
}

/** Compose an outer origin map with an inner one: the inner view's units, located in the source. */
export function composeOrigins(outer: Int32Array, inner: Int32Array): Int32Array {
  const out = new Int32Array(inner.length);
  for (let i = 0; i < inner.length; i++) out[i] = outer[inner[i]!]!;
  return out;
}

/** Number of backslashes directly before `index`. */
function backslashesBefore(text: string, index: number): number {
  let count = 0;
  while (index - count - 1 >= 0 && text.charCodeAt(index - count - 1) === 92) count++;
  return count;
}

/**
 * Where the escape sequence covering `index` starts, or `index` when no escape sequence straddles
 * it. A redaction that began or ended in the middle of `\"` or `\u0041` would leave a dangling
 * backslash or quote and break the JSON the text is part of.
 */
function sequenceStart(text: string, index: number): { start: number; end: number } | null {
  // `\X`: the unit at `index` is escaped when an odd run of backslashes precedes it.
  if (index > 0 && backslashesBefore(text, index) % 2 === 1) {
    const start = index - 1;
    const isUnicode = text[index] === "u" && HEX4.test(text.slice(index + 1, index + 5));
    return { start, end: isUnicode ? start + 6 : start + 2 };
  }
  // Inside the four hex digits of `\uXXXX`.
  for (let back = 2; back <= 5; back++) {
    const start = index - back;
    if (start < 0) break;
    if (
      text.charCodeAt(start) === 92 &&
      text[start + 1] === "u" &&
      backslashesBefore(text, start) % 2 === 0 &&
      HEX4.test(text.slice(start + 2, start + 6))
    ) {
      return start + 6 > index ? { start, end: start + 6 } : null;
    }
  }
  return null;
}

/**
 * Narrow a span so it neither starts nor ends inside an escape sequence: a partial sequence is left
 * out rather than taken in, because the sequence may be a structural quote (`pass:abc\"}` must
 * keep its `\"`). At most one sequence of a secret survives on each side.
 */
export function alignToEscapes(text: string, start: number, end: number): [number, number] {
  const head = sequenceStart(text, start);
  const tail = end < text.length ? sequenceStart(text, end) : null;
  return [head ? head.end : start, tail && tail.start < end ? tail.start : end];
}
