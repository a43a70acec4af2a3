/**
 * Escaped views of a text. A secret inside a JSON string that is itself inside a JSON string (a
 * tool call's arguments rendered into a child's prompt, a diagnostics line holding `{"content":
 * "{\"apiKey\": \"…\"}"}`) reaches redaction as `{\"apiKey\": \"…\"}` or `\\\"…\\\"`. Patterns
 * written for plain text do not see a key and its quoted value there. Rather than teach every
 * pattern every quoting depth, redaction also scans a decoded view of the text (one level of
 * backslash escapes undone), and a view of that view, and maps each match back to the original.
 */

/** Maps an index into a view (0..text.length) to where that unit's escape sequence starts in the source. */
export type Origin = (index: number) => number;

/**
 * The origin map of a view made by removing units from its source (controls taken out, look-alikes
 * folded shorter): `viewAt[i]` is where the i-th removal leaves the view, `removedUpTo[i]` how much
 * was removed up to there. A view unit came from its index plus what was removed before it: the
 * last removal at or before it, found by bisection.
 */
export function removalOrigin(viewAt: ArrayLike<number>, removedUpTo: ArrayLike<number>, count: number): Origin {
  return (index: number): number => {
    let low = 0;
    let high = count - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if (viewAt[mid]! <= index) low = mid + 1;
      else high = mid - 1;
    }
    return index + (high >= 0 ? removedUpTo[high]! : 0);
  };
}

/** The decoded text, and where each of its units came from. */
export interface EscapeView {
  readonly text: string;
  readonly origin: Origin;
}

/** Escapes that carry structure: quotes and backslashes (the nesting), `/` and `\uXXXX` (JSON writers); a `\u` without its four hex digits (`\u{…}`, `C:\users`) decodes nothing. */
const HAS_ESCAPE = /\\(?:["'\\/]|u[0-9a-fA-F]{4})/;

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
 * new to see. Linear in the text: it jumps from backslash to backslash, and the origin map is a
 * list of segments (one per escape), not an entry per unit.
 */
export function unescapeOnce(source: string): EscapeView | null {
  if (!HAS_ESCAPE.test(source)) return null;
  const parts: string[] = [];
  // Segment k: view units from viewStarts[k] on come from source units from sourceStarts[k] on.
  const viewStarts: number[] = [0];
  const sourceStarts: number[] = [0];
  let length = 0;
  let from = 0;
  let at = source.indexOf("\\");
  while (at !== -1 && at + 1 < source.length) {
    const next = source[at + 1]!;
    const simple = SIMPLE[next];
    const unicode = simple === undefined && next === "u" && HEX4.test(source.slice(at + 2, at + 6));
    if (simple === undefined && !unicode) {
      at = source.indexOf("\\", at + 1); // not an escape we decode: the backslash stays
      continue;
    }
    parts.push(source.slice(from, at));
    length += at - from;
    viewStarts.push(length);
    sourceStarts.push(at);
    parts.push(simple ?? String.fromCharCode(Number.parseInt(source.slice(at + 2, at + 6), 16)));
    length += 1;
    from = at + (unicode ? 6 : 2);
    viewStarts.push(length);
    sourceStarts.push(from);
    at = source.indexOf("\\", from);
  }
  parts.push(source.slice(from));
  const origin: Origin = (index) => {
    let low = 0;
    let high = viewStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (viewStarts[mid]! <= index) low = mid;
      else high = mid - 1;
    }
    return sourceStarts[low]! + (index - viewStarts[low]!);
  };
  return { text: parts.join(""), origin };
}

/** Compose an outer origin map with an inner one: the inner view's units, located in the source. */
export function composeOrigins(outer: Origin, inner: Origin): Origin {
  return (index) => outer(inner(index));
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
