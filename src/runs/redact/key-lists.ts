import { judgeValue, KEY_WORD_NEEDLES, KEY_WORDS, keyAllowed } from "./key-names.ts";
import { type Finding, type Quoting, REDACTED, type Rule } from "./rule.ts";

/**
 * Lists under a secret name, in text: a JSON or YAML flow list (`"password": ["…"]`), a YAML block
 * list (`password:` then `- …` lines) and a YAML block scalar (`password: |`). Each item is judged as
 * the key's own value would be (key-names.ts). Every reading is bounded in items and characters.
 */

/** How far a list under a secret name is read: items, and characters (a string item has its own bound). */
export const LIST_MAX_ITEMS = 256;
export const LIST_MAX_CHARS = 16 * 1024;
/** An object in such a list is stepped over (see objectEnd) up to this many characters. */
const LIST_OBJECT_MAX_CHARS = 1024;
const LIST_NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LIST_WORD = /(?:true|false|null)(?![\w$])/y;

/** A bare item of a YAML flow list: `#` starts a comment only after a space (`pa#ss` is one item). */
const BARE_ITEM = /[^\s,[\]{}"'#`][^\s,[\]{}"'`]{0,511}(?=[ \t]*[,\]])/y;

/** A YAML flow list's bare item at `at` (not a number or a JSON word: those are read as such), or null. */
function readBare(input: string, at: number, limit: number): string | null {
  BARE_ITEM.lastIndex = at;
  const item = BARE_ITEM.exec(input)?.[0];
  if (item === undefined || at + item.length > limit || /^(?:-?\d[\d.eE+-]*|true|false|null)$/.test(item)) return null;
  return item;
}

/** Where the JSON object opening at `open` ends (after its `}`), or -1 when it does not before `limit`. */
function objectEnd(input: string, open: number, limit: number): number {
  let depth = 0;
  for (let i = open; i < limit; i++) {
    const c = input[i];
    if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i + 1;
    else if (c === '"') {
      for (i++; i < limit && input[i] !== '"'; i++) if (input[i] === "\\") i++;
    }
  }
  return -1;
}

/**
 * A JSON list under a secret name, written as text: `{"password": ["…"]}`, `"api_key":["sk-…", 123]`
 * in a tool call's arguments or a diagnostics line, escaped or not. Each string or number item is
 * judged as the key's own value would be (`judgeValue`: placeholders and look-alikes survive) and
 * redacted inside its quotes; a number is written as the string `"[REDACTED]"`, so the JSON stays
 * valid. Nested lists are read through; an object is stepped over (its own keys name its values,
 * as redactValue judges them). Anything else (a bare word) ends the reading. The pattern starts
 * at the rare `[` and reads the key back.
 */
export const SECRET_LIST: Rule = {
  name: "secret-list",
  needles: KEY_WORD_NEEDLES,
  pattern: new RegExp(
    String.raw`\[(?<=(?:^|[^A-Za-z0-9_.-]|\\[nrt])([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}))(["']?)[ \t]*[:=][ \t]*\[)`,
    "gi",
  ),
  findings: (m, quoting) => {
    const [, key = "", keyQuote = ""] = m;
    const input = m.input;
    if (!keyAllowed(key, "")) return [];
    // The key's closing quote (the last quote before the operator): items must be quoted as it is,
    // and a number is written as a string between two of it.
    const keyQuoteAt = keyQuote === "" ? -1 : input.lastIndexOf(keyQuote, m.index);
    const quoteAt = keyQuoteAt === -1 ? undefined : keyQuoteAt - m.index;
    const found: Finding[] = [];
    const limit = Math.min(input.length, m.index + LIST_MAX_CHARS);
    let depth = 1;
    let items = 0;
    let i = m.index + 1;
    let resume = Number.POSITIVE_INFINITY;
    let bare: string | null;
    while (i < limit && depth > 0 && items < LIST_MAX_ITEMS) {
      const c = input[i]!;
      if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === ",") {
        i++;
      } else if (c === "[") {
        depth++;
        i++;
      } else if (c === "]") {
        depth--;
        i++;
      } else if (c === "{") {
        // An object's own keys name its values (the assignment rule judges them): step over it.
        // Its lists are read by their own matches, so the pattern resumes at the first object.
        const end = objectEnd(input, i, Math.min(limit, i + LIST_OBJECT_MAX_CHARS));
        resume = Math.min(resume, end === -1 ? Math.min(limit, i + LIST_OBJECT_MAX_CHARS) : i);
        if (end === -1) break;
        items++;
        i = end;
      } else if (c === '"' || c === "'") {
        let j = i + 1;
        while (j < limit && j - i <= 4096 && input[j] !== c && input[j] !== "\n") j += input[j] === "\\" ? 2 : 1;
        if (input[j] !== c || !quoting.sameQuoting(i, j) || (keyQuoteAt !== -1 && !quoting.sameQuoting(i, keyQuoteAt))) break;
        const value = input.slice(i, j + 1);
        if (judgeValue({ key, op: ":", spaced: true, value, endsLine: false })) found.push({ start: i + 1 - m.index, end: j - m.index });
        items++;
        i = j + 1;
      } else if (keyQuoteAt === -1 && (bare = readBare(input, i, limit)) !== null) {
        // A YAML flow list under an unquoted key (`password: [hunter2abc, s3cr3t!]`): a bare item
        // is judged as the key's value written bare (`password: word` inside a line survives).
        if (judgeValue({ key, op: ":", spaced: true, value: bare, endsLine: false })) found.push({ start: i - m.index, end: i + bare.length - m.index });
        items++;
        i += bare.length;
      } else {
        LIST_NUMBER.lastIndex = i;
        LIST_WORD.lastIndex = i;
        const number = LIST_NUMBER.exec(input)?.[0];
        const word = number === undefined ? LIST_WORD.exec(input)?.[0] : undefined;
        const next = input[i + (number ?? word ?? "").length];
        if ((number ?? word) === undefined || (next !== undefined && !/[\s,\]]/.test(next))) break;
        if (number !== undefined && judgeValue({ key, op: ":", spaced: false, value: number, endsLine: true })) {
          found.push({ start: i - m.index, end: i + number.length - m.index, ...(quoteAt === undefined ? {} : { quoteAt }) });
        }
        items++;
        i += (number ?? word)!.length;
      }
    }
    // What was read is not read again by a match inside it (a key in a string item): that keeps
    // the rule linear however many `password: [` a list holds.
    const pattern = SECRET_LIST.pattern;
    pattern.lastIndex = Math.max(pattern.lastIndex, Math.min(resume, i));
    return found;
  },
};

/** A line break at `at` as the text writes them (`\n`, `\r\n`, or escaped inside a JSON string): its length, or 0. */
export function lineBreakAt(input: string, at: number, escaped: boolean): number {
  if (escaped) return input.startsWith("\\n", at) ? 2 : input.startsWith("\\r\\n", at) ? 4 : 0;
  return input[at] === "\n" ? 1 : input[at] === "\r" && input[at + 1] === "\n" ? 2 : 0;
}

/** How far back a block list's key is looked for its line's start: its column. */
const KEY_COLUMN_MAX = 512;

/**
 * The column of a key starting at `keyStart`: from its line's start, or in a JSON string (`escaped`)
 * from the string's opening quote; -1 when its line starts too far back.
 */
export function keyColumn(input: string, keyStart: number, escaped: boolean): number {
  const from = Math.max(0, keyStart - KEY_COLUMN_MAX);
  for (let i = keyStart - 1; i >= from; i--) {
    const c = input[i];
    if (c === "\n" || (escaped && ((c === "n" && input[i - 1] === "\\") || (c === '"' && input[i - 1] !== "\\")))) return keyStart - i - 1;
  }
  return from === 0 ? keyStart : -1;
}

/**
 * A YAML block list under a secret name: `password:` ending its line, then `- item` lines indented
 * at least as far as the key (`passwords:\n  - s3cret`), with real line breaks or escaped ones
 * inside a JSON string. Each scalar item is judged as the key's own value ending its line would be
 * (`password: word` is one); the first line that is not a scalar item (a map item `- name: x`, a
 * line less indented, the next key) ends the list. The pattern starts at the `:`, looks ahead for
 * the line's end (most colons go on with a value), and only then reads the key back; what was read is not read again, so the rule stays linear. A block scalar (`password: |`)
 * is read by blockScalar.
 * Groups: 1 key, 2 its closing quote, 3 space before the `:`, 4 the rest of the key's line (a block
 * scalar's indicator, a comment), 5 its line break.
 */
export const YAML_BLOCK_LIST: Rule = {
  name: "yaml-block-list",
  needles: KEY_WORD_NEEDLES,
  pattern: new RegExp(
    String.raw`:(?=[ \t]*(?:[|>#]|\r?\n|\\[rn]))(?<=(?:^|[^A-Za-z0-9_.-]|\\[nrt])([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}))(["']?)([ \t]*):)([ \t]*(?:[|>][-+0-9]{0,2}[ \t]*)?(?:#[^\n\\]{0,256})?)(\r?\n|\\r\\n|\\n)`,
    "gi",
  ),
  findings: (m, quoting) => {
    const [whole, key = "", quote = "", space = "", indicator = "", lineBreak = ""] = m;
    const input = m.input;
    if (!keyAllowed(key, "")) return [];
    const escaped = lineBreak.startsWith("\\");
    const keyStart = m.index - space.length - quote.length - key.length - (quote === "" ? 0 : 1);
    const column = keyColumn(input, keyStart, escaped);
    if (column === -1) return [];
    const found: Finding[] = [];
    const limit = Math.min(input.length, m.index + LIST_MAX_CHARS);
    let at = m.index + whole.length;
    if (/[|>]/.test(indicator)) {
      at = blockScalar(m, key, column, escaped, limit, found);
      YAML_BLOCK_LIST.pattern.lastIndex = Math.max(YAML_BLOCK_LIST.pattern.lastIndex, at);
      return found;
    }
    for (let items = 0; at < limit && items < LIST_MAX_ITEMS; items++) {
      let i = at;
      while (input[i] === " ") i++;
      const blank = lineBreakAt(input, i, escaped);
      if (blank > 0 || input[i] === "#") {
        // A blank or comment line: the list goes on after it.
        let end = i;
        while (end < limit && lineBreakAt(input, end, escaped) === 0) end++;
        const next = lineBreakAt(input, end, escaped);
        if (next === 0) break;
        at = end + next;
        continue;
      }
      if (i - at < column || input[i] !== "-" || (input[i + 1] !== " " && input[i + 1] !== "\t")) {
        if (items === 0 && i - at > column) valueOnNextLine(m, key, i, limit, escaped, quoting, found);
        break;
      }
      let start = i + 2;
      while (input[start] === " " || input[start] === "\t") start++;
      // The item runs to its line's end, an escape sequence (the JSON string's end) or a comment.
      let end = start;
      while (end < limit && lineBreakAt(input, end, escaped) === 0 && input[end] !== "\n" && input[end] !== "\r" && !(input[end] === "\\" && /["'nr]/.test(input[end + 1] ?? ""))) {
        if (input[end] === "#" && (input[end - 1] === " " || input[end - 1] === "\t")) break;
        end++;
      }
      let valueEnd = end;
      while (valueEnd > start && (input[valueEnd - 1] === " " || input[valueEnd - 1] === "\t")) valueEnd--;
      const value = input.slice(start, valueEnd);
      // A map item (`- name: x`) or a nested list is not a scalar: the list is read no further.
      if (value === "" || /:(?:\s|$)|^[-?]\s|^[[{&*!|>]/.test(value)) break;
      const quoted = value[0] === '"' || value[0] === "'";
      if (quoted && (value.length < 2 || value.at(-1) !== value[0] || !quoting.sameQuoting(start, valueEnd - 1))) break;
      if (judgeValue({ key, op: ":", spaced: true, value, endsLine: true })) {
        found.push(quoted ? { start: start + 1 - m.index, end: valueEnd - 1 - m.index } : { start: start - m.index, end: valueEnd - m.index });
      }
      while (end < limit && lineBreakAt(input, end, escaped) === 0 && input[end] !== "\n") end++;
      const next = lineBreakAt(input, end, escaped);
      at = end + next;
      if (next === 0) break;
    }
    YAML_BLOCK_LIST.pattern.lastIndex = Math.max(YAML_BLOCK_LIST.pattern.lastIndex, at);
    return found;
  },
};

/**
 * `password:` with its value alone on the next line, indented further: a YAML plain scalar written
 * there, or a JSON value a formatter wrapped (`"password":` then `"…"`). One word or a quoted
 * string is the value; a line of words is prose under a label (`Password:` then a description).
 */
function valueOnNextLine(m: RegExpExecArray, key: string, start: number, limit: number, escaped: boolean, quoting: Quoting, found: Finding[]): void {
  const input = m.input;
  let end = start;
  while (end < limit && lineBreakAt(input, end, escaped) === 0 && input[end] !== "\n" && input[end] !== "\r" && !(input[end] === "\\" && /["'nr]/.test(input[end + 1] ?? ""))) end++;
  while (end > start && (input[end - 1] === " " || input[end - 1] === "\t" || input[end - 1] === ",")) end--;
  const value = input.slice(start, end);
  const quoted = /^(["']).*\1$/.test(value) && value.length >= 2 && quoting.sameQuoting(start, end - 1);
  if (!quoted && !/^[^\s"'#\-[{&*!|>?][^\s]*$/.test(value)) return;
  if (!quoted && /:$|:\s/.test(value)) return;
  if (!judgeValue({ key, op: ":", spaced: true, value, endsLine: true })) return;
  found.push(quoted ? { start: start + 1 - m.index, end: end - 1 - m.index } : { start: start - m.index, end: end - m.index });
}

/**
 * A YAML block scalar under a secret name (`password: |` or `>-`, then lines indented further than
 * the key): each line is judged as the key's value ending a line would be, and redacted whole.
 * Returns where the reading stopped (the first line not indented further).
 */
function blockScalar(m: RegExpExecArray, key: string, column: number, escaped: boolean, limit: number, found: Finding[]): number {
  const input = m.input;
  let at = m.index + m[0].length;
  for (let lines = 0; at < limit && lines < LIST_MAX_ITEMS; lines++) {
    let start = at;
    while (input[start] === " ") start++;
    let end = start;
    while (end < limit && lineBreakAt(input, end, escaped) === 0 && input[end] !== "\n" && !(escaped && input[end] === "\\" && input[end + 1] === '"')) end++;
    let valueEnd = end;
    while (valueEnd > start && (input[valueEnd - 1] === " " || input[valueEnd - 1] === "\t")) valueEnd--;
    if (valueEnd > start) {
      if (start - at <= column) return at;
      if (judgeValue({ key, op: ":", spaced: true, value: input.slice(start, valueEnd), endsLine: true })) found.push({ start: start - m.index, end: valueEnd - m.index });
    }
    const next = lineBreakAt(input, end, escaped);
    if (next === 0) return end;
    at = end + next;
  }
  return at;
}
