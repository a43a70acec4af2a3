import { BARE_PWD, judgeValue, KEY_WORDS, keyAllowed, PASSWORD_KEY, unqualified } from "./key-names.ts";
import type { Finding, Rule } from "./rule.ts";

/**
 * Tab-separated text: a `password<TAB>value` line (a key/value export, .netrc-like lines, a
 * settings dump) and a TSV table whose header names a secret's column (`title<TAB>username<TAB>
 * password<TAB>url`, a password manager's export, `psql -A -F $'\t'`). The value is judged as one
 * under its name (key-names.ts): a cell that describes the secret or is a placeholder stays. Tabs
 * and line breaks may be written escaped, in a JSON string that holds no other escape.
 */

const TAB = String.raw`(?:\t|\\t)`;
/** Every match holds a tab, real or escaped: rarer in prose and code than a secret word (`token`), so the rules run on texts with one. */
const TAB_NEEDLES = ["\t", "\\t"];
const SECRET_CELL = String.raw`[A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS})`;
const SECRET_NAME = new RegExp(`^${SECRET_CELL}$`, "i");
/** Where a cell ends: a tab, a line break, a JSON string's end. */
const CELL_END = String.raw`(?=${TAB}|\r?\n|\\[rn]|\\?"|$)`;

const judged = (key: string, value: string): boolean => keyAllowed(key, "") && judgeValue({ key, op: "=", spaced: true, value, endsLine: true });

/**
 * A secret's name, a tab (or several) and its value, one word: `password<TAB>…`, `machine<TAB>host<TAB>
 * login<TAB>me<TAB>password<TAB>…`. The pattern starts at the tab and reads the name back.
 * Groups: 1 the tabs, 2 the name, 3 the value.
 */
const NAME_TAB_VALUE: Rule = {
  name: "tab-separated-value",
  needles: TAB_NEEDLES,
  pattern: new RegExp(String.raw`(${TAB}{1,8})(?<=(?:^|[\r\n\t"]|\\[nt])(${SECRET_CELL})${TAB}{1,8})([^\s\\"]{1,1024})${CELL_END}`, "gi"),
  secret: (m) => {
    const [, tabs = "", key = "", value = ""] = m;
    // A word in a line of names is a header's next column (`title<TAB>username<TAB>password<TAB>url`).
    if (/^[A-Za-z][A-Za-z0-9_.-]*$/.test(value) && isHeader(m.input, m.index, m.index + m[0].length)) return null;
    return judged(key, value) ? [tabs.length, tabs.length + value.length] : null;
  },
};

/** A word of a passphrase, as the assignment rule reads one at a line's end (keys.ts). */
const PHRASE_WORD = "[A-Za-z0-9!@#$%^&._~]{3,64}";
/** Words that make a line of words read as a description (`password<TAB>stored in the vault`), which a chosen passphrase rarely holds. */
const DESCRIPTION_WORD = /(?:^| )(?:the|and|for|from|with|this|that|your|are|is|was|not|used|must|should|will|can|when|which|see|set)(?= |$)/i;

/**
 * A password's name opening its line, a tab and a passphrase: two to sixteen words to the line's
 * end (`password<TAB>correct horse battery staple`), as YAML's `password: correct horse battery
 * staple` goes whole. Only a password's name takes words (a token or a key has none), and a line
 * that reads as a description stays: a capitalised first word, a short word (`must be at least
 * 12 characters`), punctuation of prose, or a function word (DESCRIPTION_WORD).
 * Groups: 1 the tabs, 2 the name, 3 the phrase.
 */
const NAME_TAB_PHRASE: Rule = {
  name: "tab-separated-phrase",
  needles: TAB_NEEDLES,
  pattern: new RegExp(
    String.raw`(${TAB}{1,8})(?<=(?:^|[\r\n"]|\\n)(${SECRET_CELL})${TAB}{1,8})(${PHRASE_WORD}(?: ${PHRASE_WORD}){1,15})(?=\r?\n|\\[rn]|\\?"|$)`,
    "gi",
  ),
  secret: (m) => {
    const [, tabs = "", key = "", phrase = ""] = m;
    if (/^[A-Z]/.test(phrase) || !PASSWORD_KEY.test(unqualified(key)) || BARE_PWD.test(key) || !keyAllowed(key, "") || DESCRIPTION_WORD.test(phrase)) return null;
    return [tabs.length, tabs.length + phrase.length];
  },
};

/** A header's cell: a column's name. */
const COLUMN = String.raw`[A-Za-z][A-Za-z0-9 _.-]{0,63}`;
const HEADER = new RegExp(String.raw`^(?:${COLUMN}${TAB}){2,63}${COLUMN}$`);
/** How far a header's line is looked for either side of a match (a longer line is no header). */
const HEADER_REACH = 512;

/** Whether the line holding [from, to) is a TSV header: three names or more, tabs apart. */
function isHeader(input: string, from: number, to: number): boolean {
  const offset = Math.max(0, from - HEADER_REACH);
  const window = input.slice(offset, to + HEADER_REACH);
  const breaks = /\r?\n|\\n|"/g;
  let start = 0;
  let end = -1;
  for (let found = breaks.exec(window); found !== null; found = breaks.exec(window)) {
    if (found.index + offset < from) start = found.index + found[0].length;
    else if (found.index + offset >= to) {
      end = found.index;
      break;
    }
  }
  if (end === -1 && offset + window.length < input.length) return false;
  if (start === 0 && offset > 0) return false;
  return HEADER.test(window.slice(start, end === -1 ? window.length : end));
}
const MAX_ROWS = 1024;

/**
 * A TSV table's header with a secret's column (three columns or more, each a name), and the rows
 * under it with as many cells: each row's cell in that column is judged under its name.
 * Groups: 1 the line break or quote before the header, 2 the header.
 */
const TSV_TABLE: Rule = {
  name: "tab-separated-table",
  needles: TAB_NEEDLES,
  pattern: new RegExp(String.raw`(^|\r?\n|\\n|")((?:${COLUMN}${TAB}){2,63}${COLUMN})(?=\r?\n|\\r\\n|\\n)`, "gi"),
  findings: (m) => {
    const [, before = "", header = ""] = m;
    const escaped = header.includes("\\t");
    const names = header.split(escaped ? "\\t" : "\t");
    const secret = names.flatMap((name, i) => (SECRET_NAME.test(name) ? [i] : []));
    if (secret.length === 0) return [];
    const found: Finding[] = [];
    const lineBreak = escaped ? /\\r\\n|\\n|\\?"|$/y : /\r?\n|$/y;
    // A JSON string's closing quote ends the table: in a view the string is decoded but still quoted.
    const rowEnd = escaped ? /\\r\\n|\\n|\\?"/g : /\r?\n|"(?="*[ \t]*(?:[,}\]]|$))/g;
    let at = m.index + before.length + header.length;
    for (let rows = 0; rows < MAX_ROWS; rows++) {
      lineBreak.lastIndex = at;
      const broke = lineBreak.exec(m.input);
      if (broke === null || broke[0] === "" || broke[0].endsWith('"')) break;
      const start = at + broke[0].length;
      rowEnd.lastIndex = start;
      const ends = rowEnd.exec(m.input);
      const end = ends === null ? m.input.length : ends.index - (m.input[ends.index - 1] === "\r" ? 1 : 0);
      const cells = m.input.slice(start, end).split(escaped ? "\\t" : "\t");
      if (cells.length !== names.length) break;
      let cellAt = start;
      cells.forEach((cell, i) => {
        if (secret.includes(i) && judged(names[i]!, cell)) found.push({ start: cellAt - m.index, end: cellAt - m.index + cell.length });
        cellAt += cell.length + (escaped ? 2 : 1);
      });
      at = ends === null ? m.input.length : ends.index;
    }
    // The rows are read: the next header is looked for after them.
    TSV_TABLE.pattern.lastIndex = Math.max(TSV_TABLE.pattern.lastIndex, at);
    return found;
  },
};

export const TAB_SEPARATED_RULES: readonly Rule[] = [NAME_TAB_VALUE, NAME_TAB_PHRASE, TSV_TABLE];
