import { isPlaceholder, judgeValue, KEY_WORDS, keyAllowed } from "./key-names.ts";
import { looksRandom, type Rule } from "./rule.ts";

/**
 * Secret-named keys in shapes no assignment has: PHP's `var_dump` (`["password"]=>` then
 * `string(8) "…"` on the next line) and a Markdown table's row (`| DB_PASSWORD | … |`, a value
 * cell of one word or in backticks). The value is judged as one under its name (key-names.ts): a
 * cell that describes the secret (`string`, `The API token, from …`, `${API_KEY}`) stays.
 */

/** Groups: 1 everything before the value, 2 the key, 3 the value. */
const VAR_DUMP: Rule = {
  name: "php-var-dump",
  needles: ["]=>"],
  pattern: new RegExp(String.raw`(\["([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}))"\]=>\s{0,32}string\(\d{1,6}\) ")([^"\n]{1,4096})(?=")`, "gi"),
  secret: (m) => {
    const [, head = "", key = "", value = ""] = m;
    if (!keyAllowed(key, "") || !judgeValue({ key, op: "=", spaced: false, value: `"${value}"`, endsLine: true })) return null;
    return [head.length, head.length + value.length];
  },
};

/**
 * The pattern starts at the row's first `|` (a literal is found fast) and checks with a lookbehind
 * that it opens a line. Groups: 1 everything before the value, 2 the key, 3 the value's backtick, 4 the value.
 */
const TABLE_ROW: Rule = {
  name: "markdown-table-row",
  // A pipe is rarer in a text than a secret word (`key`, `token`): the rule runs on texts with one.
  needles: ["|"],
  pattern: new RegExp(String.raw`(\|(?<=(?:^|\n|\\n|")[ \t]*\|)[ \t]*\x60?([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}))\x60?[ \t]*\|[ \t]*(\x60?))([^\s|\x60]{3,512})\3(?=[ \t]*\|)`, "gi"),
  secret: (m) => {
    const [, head = "", key = "", tick = "", value = ""] = m;
    if (!keyAllowed(key, "") || !judgeValue({ key, op: ":", spaced: true, value: tick ? `\x60${value}\x60` : value, endsLine: true })) return null;
    return [head.length, head.length + value.length];
  },
};

/**
 * A `[name, value]` pair of string literals: fetch's header entries (`[["X-Api-Key", "…"]]`),
 * Python's tuples (`("X-Auth-Token", "…")`). A list of field names (`("password", "username")`) is
 * one too, so the value must look like a token: 12 or more characters, a digit or both cases.
 * Groups: 1 everything before the value, 2 the name's quote, 3 the name, 4 the value's quote, 5 the value.
 */
const NAME_VALUE_PAIR: Rule = {
  name: "name-value-pair",
  needles: ['["', "['", '("', "('"],
  pattern: new RegExp(String.raw`([\[(](["'])([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}))\2[ \t]*,[ \t]*(["']))([^"'\\\s]{12,512})(?=\4[ \t]*[\])])`, "gi"),
  secret: (m) => {
    const [, head = "", , key = "", , value = ""] = m;
    return keyAllowed(key, "") && looksRandom(value) && !isPlaceholder(value) ? [head.length, head.length + value.length] : null;
  },
};

/** GitHub Actions' `::add-mask::VALUE`: the workflow says the value is a secret (a `$VARIABLE` or `${{ … }}` is none). */
const ADD_MASK: Rule = {
  name: "github-add-mask",
  needles: ["::add-mask::"],
  pattern: /(::add-mask::)([^\s"'\\$]{3,1024})/g,
  secret: (m) => (isPlaceholder(m[2] ?? "") ? null : [(m[1] ?? "").length, (m[1] ?? "").length + (m[2] ?? "").length]),
};

export const DUMP_RULES: readonly Rule[] = [VAR_DUMP, TABLE_ROW, NAME_VALUE_PAIR, ADD_MASK];
