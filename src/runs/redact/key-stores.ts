import { keyColumn, LIST_MAX_CHARS, LIST_MAX_ITEMS, lineBreakAt } from "./key-lists.ts";
import { isSecretKeyName, judgeStoreValue, judgeValue, KEY_WORD_NEEDLES, KEY_WORDS, PLURAL_KEY } from "./key-names.ts";
import type { Finding, Rule } from "./rule.ts";

/**
 * Stores of secrets: maps whose every value is a secret, whatever each is called. A map under a
 * plural secret name (`secrets:`, `credentials:`, `api_keys:`, as Helm values and app configs keep
 * them) and the maps inside it; and a Kubernetes Secret's `data:` and `stringData:`. What only
 * declares or names secrets is not one: Compose's `secrets:` hold files and environment names
 * (`file:`, `environment:`, `external:`), GitHub Actions' `on.workflow_call.secrets` declarations
 * (`required:`, `description:`), references such as `${{ secrets.X }}` (placeholders). index.ts
 * judges parsed values alike (see storeFor there); this module reads YAML text, and
 * key-stores-json.ts JSON text.
 */

/**
 * Fields that make a map under a store's name a declaration of a secret or a reference to one:
 * Compose's `file`, `environment` and `external`, GitHub Actions' `required` and `description`,
 * Kubernetes' `secretKeyRef` and `valueFrom`.
 */
export const DECLARATION_FIELD = /^(?:file|environment|external|required|description|optional|valuefrom|secretkeyref|secretref)$/i;

/**
 * A Kubernetes Secret's values are judged under this name: every one is a secret, a word included,
 * as a password's is (placeholders and templates still survive).
 */
export const SECRET_DATA_NAME = "password";

/**
 * A document separator and a Secret's `kind:` line, at a line's start (after a real or escaped
 * line break, or a JSON string's opening quote).
 */
const DOCUMENT_START = /(?:^|\n|\\n)---(?=[ \t]*(?:\r?\n|\\[rn]|$))/g;
const SECRET_KIND = /(?:^|\n|\\n|")kind:[ \t]*(["']?)Secret\1[ \t]*(?=\r?\n|\\[rn]|$)/g;

/** The documents of the last text asked about that are Secrets, flat [start, end, …]: each text is read once, however many `data:` it holds. */
let secretDocuments: { input: string; spans: number[] } | undefined;

/** Whether `at` is inside a YAML document of `input` whose `kind` is Secret. */
function inSecretDocument(input: string, at: number): boolean {
  if (secretDocuments?.input !== input) {
    const spans: number[] = [];
    if (input.includes("Secret")) {
      const starts = [0, ...Array.from(input.matchAll(DOCUMENT_START), (m) => m.index), input.length];
      let doc = 0;
      for (const kind of input.matchAll(SECRET_KIND)) {
        while (starts[doc + 1]! <= kind.index) doc++;
        if (spans.at(-2) !== starts[doc]) spans.push(starts[doc]!, starts[doc + 1]!);
      }
    }
    secretDocuments = { input, spans };
  }
  // The last span starting at or before `at`, by bisection: a text may hold many documents.
  const spans = secretDocuments.spans;
  let low = 0;
  let high = spans.length / 2 - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (spans[2 * mid]! <= at) low = mid + 1;
    else high = mid - 1;
  }
  return high >= 0 && at < spans[2 * high + 1]!;
}

/** One `key: value` line of a store's block, as read. */
interface Entry {
  indent: number;
  key: string;
  /** The map it is a field of: an index into the entries, or -1 for the store itself. */
  parent: number;
  /** Its value's [start, end) in the text, or none for a line that opens a nested map. */
  value?: readonly [number, number];
}

/** A block map's field: its key (quoted or not), and what follows the `:` (a comment is not part of it). */
const FIELD = /^(["']?)([^\s"':#][^"':#]{0,127}?)\1[ \t]*:(?:[ \t]+(.*?))?[ \t]*(?:[ \t]#.*)?$/;

/**
 * A YAML block map under a store's name (see above): `secrets:` ending its line, then `name:
 * value` lines indented further, with real line breaks or escaped ones inside a JSON string. Each
 * value is judged as one stored under the store's name would be (`judgeValue`: placeholders,
 * paths, booleans and `${{ secrets.X }}` survive), in nested maps too, except in a map with a
 * declaration's field. A block scalar's lines and a list's items (Compose's `- source: x`) are
 * passed over. Bounded as lists are, and what was
 * read is not read again. Groups: 1 key, 2 its closing quote, 3 space before the `:`, 4 the rest
 * of the key's line (a comment), 5 its line break.
 */
export const YAML_STORE_MAP: Rule = {
  name: "yaml-store-map",
  needles: [...KEY_WORD_NEEDLES, "data"],
  pattern: new RegExp(
    String.raw`:(?=[ \t]*(?:#|\r?\n|\\[rn]))(?<=(?:^|[^A-Za-z0-9_.-]|\\[nrt])([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}|data|stringData))(["']?)([ \t]*):)([ \t]*(?:#[^\n\\]{0,256})?)(\r?\n|\\r\\n|\\n)`,
    "gi",
  ),
  findings: (m, quoting) => {
    const [whole, key = "", quote = "", space = "", , lineBreak = ""] = m;
    const input = m.input;
    const kubernetes = key === "data" || key === "stringData";
    if (kubernetes ? !inSecretDocument(input, m.index) : !(isSecretKeyName(key) && PLURAL_KEY.test(key))) return [];
    const store = kubernetes ? SECRET_DATA_NAME : key;
    const escaped = lineBreak.startsWith("\\");
    const column = keyColumn(input, m.index - space.length - quote.length - key.length - (quote === "" ? 0 : 1), escaped);
    if (column === -1) return [];
    const limit = Math.min(input.length, m.index + LIST_MAX_CHARS);
    const entries: Entry[] = [];
    const open: number[] = []; // the nested maps the next line may be in, innermost last
    let scalarIndent = -1; // inside a block scalar opened at this indent
    let itemIndent = -1; // inside a list item (`- source: x`) at this indent: a list's, not the store's
    let at = m.index + whole.length;
    for (let lines = 0; at < limit && lines < LIST_MAX_ITEMS; lines++) {
      let start = at;
      while (input[start] === " ") start++;
      let end = start;
      while (end < limit && lineBreakAt(input, end, escaped) === 0 && input[end] !== "\n" && !(escaped && input[end] === "\\" && input[end + 1] === '"')) end++;
      const indent = start - at;
      const content = input.slice(start, end);
      if (content !== "" && !content.startsWith("#")) {
        if (indent <= column) break;
        if (itemIndent !== -1 && indent <= itemIndent) itemIndent = -1;
        if (content.startsWith("- ") || content === "-") {
          if (itemIndent === -1) itemIndent = indent;
        } else if (itemIndent === -1 && (scalarIndent === -1 || indent <= scalarIndent)) {
          scalarIndent = -1;
          const field = FIELD.exec(content);
          if (field !== null) {
            while (open.length > 0 && entries[open.at(-1)!]!.indent >= indent) open.pop();
            const entry: Entry = { indent, key: field[2]!, parent: open.at(-1) ?? -1 };
            const value = field[3] ?? "";
            if (value === "") open.push(entries.length);
            else if (/^[|>]/.test(value)) scalarIndent = indent;
            else {
              const valueStart = start + content.indexOf(value, field[0].indexOf(":"));
              entry.value = [valueStart, valueStart + value.length];
            }
            entries.push(entry);
          }
        }
      }
      const next = lineBreakAt(input, end, escaped);
      if (next === 0) {
        at = end;
        break;
      }
      at = end + next;
    }
    YAML_STORE_MAP.pattern.lastIndex = Math.max(YAML_STORE_MAP.pattern.lastIndex, at);
    if (entries.length === 0) return [];
    const declarations = new Set(entries.filter((entry) => DECLARATION_FIELD.test(entry.key)).map((entry) => entry.parent));
    const found: Finding[] = [];
    for (const entry of entries) {
      // A field with a secret name of its own is the assignment rule's (keys.ts).
      if (entry.value === undefined || declarations.has(entry.parent) || isSecretKeyName(entry.key)) continue;
      const [start, end] = entry.value;
      const value = input.slice(start, end);
      if (escaped && value.startsWith("\\")) continue; // an escaped quote: the decoded view reads it
      const quoted = value[0] === '"' || value[0] === "'";
      if (quoted && (value.length < 2 || value.at(-1) !== value[0] || !quoting.sameQuoting(start, end - 1))) continue;
      if (!(quoted ? judgeValue({ key: store, op: ":", spaced: true, value, endsLine: true }) : judgeStoreValue(store, value))) continue;
      found.push(quoted ? { start: start + 1 - m.index, end: end - 1 - m.index } : { start: start - m.index, end: end - m.index });
    }
    return found;
  },
};
