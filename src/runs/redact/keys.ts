import { type Finding, group, type Quoting, REDACTED, type Rule } from "./rule.ts";

/**
 * Secrets known by the name they are stored under: `DB_PASS=…`, `"apiKey": "…"`,
 * `ENCRYPTION_KEY=…`, `<password>…</password>`, `auth` in a Docker config. A key must END at a
 * secret word, so `max_tokens`, `tokenizer`, `password_hash`, `secret_santa` and `api_key_id`
 * survive. The value's shape then decides (`judgeValue`): code and placeholders survive.
 */

/**
 * Words a secret key name ends with, singular or plural (`passwords`, `api_keys`, `secrets`).
 * `pass` and `pwd` need more care: see `keyAllowed`; plurals too: see `judgeValue`.
 */
const KEY_WORDS = `(?:${[
  "pass(?:word|wd|phrase|code)?",
  "pwd",
  "secret",
  "credential",
  "token",
  "apikey",
  "secret_key_base",
  // `<kind>_key`: kinds of key that are secret. `primary_key`, `sort_key`, `public_key` are not.
  "(?:api|access|secret|private|encryption|decryption|signing|master|auth|app|hmac|session|client|shared|account|storage|license|webhook|service|admin|deploy|jwt|aes|cipher|subscription|consumer|crypto|enc)[_.-]?key",
].join("|")})s?`;

/** The whole key is a secret name (for object keys in `redactValue`). */
const KEY_NAME = new RegExp(`^[A-Za-z0-9_.$-]{0,128}?(?:${KEY_WORDS})$`, "i");

/**
 * `pass` alone is an English word inside others (`bypass`, `compass`): it counts only as a whole
 * key or after a separator (`DB_PASS`, `db.pass`). `pwd` alone is the shell's working directory:
 * it counts after a separator (`MYSQL_PWD`) or as an ODBC field (`;Pwd=…`).
 */
function keyAllowed(key: string, before: string): boolean {
  const lower = key.toLowerCase().replace(/pwds$/, "pwd");
  if (lower.endsWith("pwd")) return /[_.-]pwd$/.test(lower) || before === ";";
  if (lower.endsWith("pass")) return lower === "pass" || /[_.-]pass$/.test(lower);
  return true;
}

export function isSecretKeyName(key: string): boolean {
  return KEY_NAME.test(key) && keyAllowed(key, "");
}

const CODE_WORDS = new Set(
  (
    "string number boolean bigint any unknown never object null undefined true false none nil undef str int bool bytes " +
    "required optional secret password passwd token key redacted hidden masked omitted sensitive env yes no void function " +
    "empty unset default disabled enabled on off text input field hash hashed encrypted string? self this"
  ).split(" "),
);

const PLACEHOLDER = /^(?:\*+|x+|X+|\.+|…+|•+|#+|-+|<.*>|\$\{.*\}|\{\{.*\}\}|%\(?\w+\)?s?|!\w+|\[REDACTED\]?)$/;

/** Documentation placeholders: `user:password@host`, `<password>`, `${DB_PASSWORD}`, `$PASS`, `****`. */
export function isPlaceholder(value: string): boolean {
  return PLACEHOLDER.test(value) || /^\$\w+$|^(?:your[_-]?)?(?:password|passwd|pass|pwd|pw|secret|token|api[_-]?key)$/i.test(value);
}

/** A filesystem path (credentials *files*), not a credential: `~/.ssh/id_rsa`, `/etc/app/key.pem`. */
const PATH = /^(?:~|\.{1,2})?\/[\w.@-]+(?:\/[\w.@-]+)*$/;
const looksLikePath = (value: string): boolean => PATH.test(value) && /\/\.|\.\w{1,5}$/.test(value);

const PASSWORD_KEY = /(?:pass(?:word|wd|phrase|code)?s?|pwds?)$/i;
/** A plural name: no singular secret word ends in `s` but `pass`. */
const PLURAL_KEY = /[^s]s$/i;
/**
 * `tokens` is mostly a count (`max_tokens`, `totalTokens`) or a tokenizer's pieces (`special_tokens:
 * ["[INST]"]`): a value under it is a token only when it looks like one, long and random.
 */
const TOKENS_KEY = /tokens$/i;
const looksLikeToken = (value: string): boolean => value.length >= 16 && /^[\x21-\x7e]+$/.test(value) && /\d/.test(value) && /[A-Za-z]/.test(value);

export interface Assignment {
  key: string;
  /** The operator as written: `=`, `:`, `:=`, `=>`. */
  op: string;
  /** Whitespace around the operator. */
  spaced: boolean;
  /** The value as written, quotes included. */
  value: string;
  /** The value ends its line (YAML `password: word`). */
  endsLine: boolean;
}

/** Whether a value assigned to a secret-named key is a secret, judged by its shape (docs/runs.md). */
export function judgeValue({ key, op, spaced, value, endsLine }: Assignment): boolean {
  const quote = value[0];
  const quoted = quote === '"' || quote === "'" || quote === "`";
  const inner = quoted ? value.slice(1, -1) : value;
  const passwordKey = PASSWORD_KEY.test(key);
  if (inner.length < 3 || inner.startsWith(REDACTED.slice(0, -1))) return false; // too short, or already redacted
  if (PLURAL_KEY.test(key) && (/^-?\d+(?:\.\d+)?$/.test(inner) || (TOKENS_KEY.test(key) && !looksLikeToken(inner)))) return false; // a count, a tokenizer's piece
  if (PLACEHOLDER.test(inner) || inner.startsWith("<") || CODE_WORDS.has(inner.toLowerCase())) return false;
  if (quote === "`" && inner.includes("${")) return false; // a template literal
  if (/^\$\{?[A-Za-z_]\w*\}?$/.test(inner)) return false; // a variable reference, quoted or not
  if (/(?:\.{3}|…)$/.test(inner)) return false; // an example cut short: `sk-ant-...`
  if (looksLikePath(inner)) return false;
  // A token, key or secret is never a short lower-case word: `apiKey: "ollama"` is a dummy value.
  // A password can be (`"password": "sunshine"`).
  if (!passwordKey && /^[a-z-]{3,15}$/.test(inner)) return false;
  if (quoted) return true;
  if (/^[$|>]|[([]|^\d{1,5}$/.test(inner)) return false; // shell expansion or a pipe, a call or index, a small number
  if (/^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+$/.test(inner)) return false; // member expression, `a?.b` too
  // `KEY=value` with no spaces is env, flag or URL-query syntax: whatever follows is the value.
  if (op === "=" && !spaced) return true;
  // Spaced `=` (INI, ~/.aws/credentials, code) and `:` (YAML, prose). A credential usually has a
  // digit or punctuation; identifiers and words (`other_variable`, `enabled`, `MAX_RETRIES`) survive.
  if (/^[A-Za-z]+$/.test(inner) && passwordKey) {
    // `password = word` (INI, .pypirc) is a password; `password: word` only when it ends the line
    // (YAML), not in prose ("the password: please rotate it").
    return (op !== ":" || endsLine) && !/[a-z][A-Z]/.test(inner);
  }
  if (/^[A-Za-z_-]+$/.test(inner) || /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(inner)) return false;
  // Tokens and keys are long; a short word with a digit after `token:` in prose (`base64`) is not one.
  if (!passwordKey && inner.length < 8 && /^[A-Za-z0-9]+$/.test(inner)) return false;
  return true;
}

/**
 * An unquoted value runs to whitespace or a delimiter. It stops before an escape sequence (`\"`,
 * `\n` of an escaped string) and before `&name=` (the next URL query parameter), but keeps a
 * lone `&` (`Tr0ub4dor&3`).
 */
const UNQUOTED = String.raw`(?:[^\s"'\x60\\,;)}\]&]|&(?![\w.-]{1,64}=)|\\(?![\\"'/nrtbfu]))+`;
/** A backtick-quoted value must not open with a space or punctuation: that is markdown closing code. */
const VALUE = String.raw`("(?:[^"\\\n]|\\.){0,4096}"|'(?:[^'\\\n]|\\.){0,4096}'|\x60[^\x60\s,;.)][^\x60\n]{0,4095}\x60|${UNQUOTED})`;

/**
 * The pattern starts at the operator, the rarest character of an assignment, and reads the key
 * back with a lookbehind: starting at every word instead was the slowest rule by far.
 * Groups: 1 key, 2 closing quote of the key, 3 space, 4 rest of the operator, 5 space, 6 value.
 */
const ASSIGNMENT: Rule = {
  name: "assignment",
  pattern: new RegExp(
    String.raw`[:=](?<=(?:^|[^A-Za-z0-9_.-]|\\[nrt])([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}))(["']?\]?)([ \t]*)[:=])((?<=:)=|(?<==)>)?([ \t]*)${VALUE}`,
    "gi",
  ),
  findings: (m, quoting) => {
    const span = assignmentSpan(m, quoting);
    if (!span) return [];
    // A number under a JSON key (`"password": 83749212`) is written as the string "[REDACTED]",
    // quoted as the key is, so the JSON stays valid.
    const [whole, key = "", quote = "", pre = "", rest = "", post = "", value = ""] = m;
    if (quote === '"' && whole[0] + rest === ":" && JSON_NUMBER.test(value)) return [{ start: span[0], end: span[1], quoteAt: -pre.length - 1 }];
    const found: Finding[] = [{ start: span[0], end: span[1] }];
    // `API_KEYS=k1,k2`: a plural name's value may be a comma-separated list; each item is judged alike.
    if (PLURAL_KEY.test(key) && whole[0] + rest === "=" && pre + post === "" && m.input[m.index + whole.length] === ",") {
      found.push(...commaItems(m, key));
    }
    return found;
  },
};

const COMMA_ITEM = new RegExp(String.raw`,(${UNQUOTED})`, "y");

/** The items after the first of a plural name's comma-separated value, as findings of match `m`. */
function commaItems(m: RegExpExecArray, key: string): Finding[] {
  const found: Finding[] = [];
  const limit = Math.min(m.input.length, m.index + LIST_MAX_CHARS);
  let at = m.index + m[0].length;
  for (let items = 0; items < LIST_MAX_ITEMS && at < limit; items++) {
    COMMA_ITEM.lastIndex = at;
    const item = COMMA_ITEM.exec(m.input)?.[1];
    if (item === undefined) break;
    if (judgeValue({ key, op: "=", spaced: false, value: item, endsLine: false })) found.push({ start: at + 1 - m.index, end: at + 1 + item.length - m.index });
    at += 1 + item.length;
  }
  // What was read is not read again (a key inside an item): that keeps the rule linear.
  ASSIGNMENT.pattern.lastIndex = Math.max(ASSIGNMENT.pattern.lastIndex, at);
  return found;
}

const JSON_NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The secret value of an assignment match, as [start, end) relative to the match; null: none. */
function assignmentSpan(m: RegExpExecArray, quoting: Quoting): readonly [number, number] | null {
  const [whole, key = "", quote = "", pre = "", rest = "", post = "", value = ""] = m;
  const op = whole[0] + rest;
  // `=` but not `==`, `===` or `=~`; `=>` only after a quoted key (Ruby, PHP hashes), not an arrow.
  if (op === "=" && /^[=~]/.test(value)) return null;
  if (op === "=>" && quote === "") return null;
  if (!keyAllowed(key, m.input[m.index - key.length - quote.length - pre.length - 1] ?? "")) return null;
  const end = m.index + whole.length;
  const after = m.input[end];
  const endsLine = after === undefined || after === "\n" || after === "\r" || /^\\[nr]/.test(m.input.slice(end, end + 2));
  if (!judgeValue({ key, op, spaced: pre !== "" || post !== "", value, endsLine })) return null;
  const start = whole.length - value.length;
  if (!/^["'\x60]/.test(value)) return [start, whole.length];
  return quoting.sameQuoting(m.index + start, m.index + whole.length - 1) ? [start + 1, whole.length - 1] : null;
}

/** The fields of a name/value pair, in the case insensitivity the patterns give them. */
const PAIR_NAME = "name|key|parameterkey";
const PAIR_VALUE = "value|parametervalue";

/**
 * A setting given as a name/value pair, its name in one field and its value in the next: a
 * Kubernetes or ECS env entry (`- name: DB_PASSWORD` then `value: …`, in YAML or JSON), an AWS
 * parameter (`"Name": …, "Value": …`), CloudFormation's `ParameterKey`/`ParameterValue`. The name
 * is judged as an assignment's key and the value by its shape, as `DB_PASSWORD: …` would be; a
 * pair whose value comes from elsewhere (`valueFrom`) has none to redact. The pattern starts at
 * the name field and checks the boundary before it with a lookbehind, as `prefixed` does.
 * Groups: 1 everything before the value, 2 the name's quote, 3 the name, 4 the value.
 */
const NAME_VALUE: Rule = {
  name: "name-value-pair",
  needles: ["alue", "ALUE"],
  pattern: new RegExp(
    String.raw`((?:${PAIR_NAME})(?<=(?:^|[^A-Za-z0-9_-]|\\[nrt])(?:${PAIR_NAME}))["']?[ \t]*[:=][ \t]*(["']?)([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}))\2[ \t]*,?[ \t]*(?:\r?\n[ \t]*)?["']?(?:${PAIR_VALUE})["']?[ \t]*[:=][ \t]*)${VALUE}`,
    "gi",
  ),
  secret: (m, quoting) => {
    const [whole, head = "", , key = "", value = ""] = m;
    if (!keyAllowed(key, "")) return null;
    const end = m.index + whole.length;
    const after = m.input[end];
    const endsLine = after === undefined || after === "\n" || after === "\r" || /^\\[nr]/.test(m.input.slice(end, end + 2));
    if (!judgeValue({ key, op: ":", spaced: true, value, endsLine })) return null;
    if (!/^["'\x60]/.test(value)) return [head.length, whole.length];
    return quoting.sameQuoting(m.index + head.length, end - 1) ? [head.length + 1, whole.length - 1] : null;
  },
};

/** How far a list under a secret name is read: items, and characters (a string item has its own bound). */
const LIST_MAX_ITEMS = 256;
const LIST_MAX_CHARS = 16 * 1024;
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
const SECRET_LIST: Rule = {
  name: "secret-list",
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
function lineBreakAt(input: string, at: number, escaped: boolean): number {
  if (escaped) return input.startsWith("\\n", at) ? 2 : input.startsWith("\\r\\n", at) ? 4 : 0;
  return input[at] === "\n" ? 1 : input[at] === "\r" && input[at + 1] === "\n" ? 2 : 0;
}

/** How far back a block list's key is looked for its line's start: its column. */
const KEY_COLUMN_MAX = 512;

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
const YAML_BLOCK_LIST: Rule = {
  name: "yaml-block-list",
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
    // The key's column: from its line's start, or in a JSON string from the string's opening quote.
    const from = Math.max(0, keyStart - KEY_COLUMN_MAX);
    let lineStart = from === 0 ? 0 : -1;
    for (let i = keyStart - 1; i >= from; i--) {
      const c = input[i];
      if (c === "\n" || (escaped && ((c === "n" && input[i - 1] === "\\") || (c === '"' && input[i - 1] !== "\\")))) {
        lineStart = i + 1;
        break;
      }
    }
    if (lineStart === -1) return [];
    const column = keyStart - lineStart;
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
      if (i - at < column || input[i] !== "-" || (input[i + 1] !== " " && input[i + 1] !== "\t")) break;
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

/** Calls that take a setting's name and then its value: PHP's define, environment defaults, Java properties, header and map setters. */
const SETTERS = "define|setdefault|getenv|setProperty|setenv|putenv|put|set|setHeader|header";

/**
 * A secret name and a quoted value passed to such a call: `define('DB_PASSWORD', '…')`,
 * `os.getenv("API_TOKEN", "…")`, `System.setProperty("db.password", "…")`, `headers.put("X-Api-Key",
 * "…")`. The value is judged as the name's quoted value would be (placeholders survive); a value
 * that is not a string literal (`getenv('DB_PASSWORD')`) is code. The pattern starts at the call's
 * name and checks the boundary before it with a lookbehind.
 * Groups: 1 everything before the value, 2 the name's quote, 3 the name, 4 the value.
 */
const CALL_ARGUMENT: Rule = {
  name: "call-argument",
  pattern: new RegExp(
    String.raw`((?:${SETTERS})(?<=(?:^|[^A-Za-z0-9_$]|\\[nrt])(?:${SETTERS}))\([ \t]{0,16}(["'])([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}))\2[ \t]{0,16},[ \t]{0,16})("(?:[^"\\\n]|\\.){0,4096}"|'(?:[^'\\\n]|\\.){0,4096}')`,
    "gi",
  ),
  secret: (m, quoting) => {
    const [, head = "", , key = "", value = ""] = m;
    if (!keyAllowed(key, "") || !judgeValue({ key, op: "=", spaced: true, value, endsLine: false })) return null;
    return quoting.sameQuoting(m.index + head.length, m.index + head.length + value.length - 1) ? [head.length + 1, head.length + value.length - 1] : null;
  },
};

/** `<password>…</password>`, `<apiKey>…</apiKey>` in XML configs (Maven settings, .NET). */
const XML_ELEMENT: Rule = {
  name: "xml-element",
  pattern: new RegExp(String.raw`(<([A-Za-z0-9_.:-]{0,64}?(?:${KEY_WORDS}))>)([^<\n]{3,1024})(?=</\2>)`, "gi"),
  secret: (m) => {
    const value = m[3] ?? "";
    if (!keyAllowed(m[2] ?? "", "") || PLACEHOLDER.test(value.trim()) || /^\$\{/.test(value)) return null;
    const start = (m[1] ?? "").length;
    return [start, start + value.length];
  },
};

/** `<add key="ApiKey" value="…"/>` (.NET appSettings), `<property name="db.password" value="…"/>` (Spring). */
const XML_KEY_VALUE: Rule = {
  name: "xml-key-value",
  pattern: new RegExp(
    String.raw`((?:key|name)=(["'])([A-Za-z0-9_.:-]{0,64}?(?:${KEY_WORDS}))\2\s{1,16}value=(["']))([^"'\n]{3,1024})(?=\4)`,
    "gi",
  ),
  secret: (m) => {
    const [, head = "", , key = "", , value = ""] = m;
    return keyAllowed(key, "") && !isPlaceholder(value) ? [head.length, head.length + value.length] : null;
  },
};

/** Space-separated env settings: fish `set -x NAME value`, Dockerfile `ENV NAME value`, csh `setenv NAME value`. */
const SPACED_ENV: Rule = {
  name: "spaced-env",
  pattern: new RegExp(
    String.raw`((?:set[ \t]{1,16}-[gxUlu]{1,4}|ENV|setenv)[ \t]{1,16}([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}))[ \t]{1,16})${VALUE}`,
    "gi",
  ),
  secret: (m) => {
    const [, head = "", key = "", value = ""] = m;
    if (!keyAllowed(key, "") || !judgeValue({ key, op: "=", spaced: false, value, endsLine: true })) return null;
    return /^["'\x60]/.test(value) ? [head.length + 1, head.length + value.length - 1] : [head.length, head.length + value.length];
  },
};

/** `~/.netrc`: `machine host login me password …` (or `default login me password …`), on one line or several. */
const NETRC: Rule = {
  name: "netrc",
  pattern: /((?:machine\s{1,16}\S{1,256}|default(?=\s{1,16}login\s))(?:\s{1,16}login\s{1,16}\S{1,256})?(?:\s{1,16}account\s{1,16}\S{1,256})?\s{1,16}password\s{1,16})([^\s"'\\\x60]{1,512})/g,
  secret: group(2, (m) => !isPlaceholder(m[2] ?? "")),
};

/**
 * `~/.pgpass`: `host:port:database:user:password`, one a line or a JSON string (`*` stands for
 * any host, port, database or user). The pattern starts at `:port:` and reads the host back; a host has a letter,
 * a dot or `*`, so times (`12:30:45:…`) are not read, and passwd lines have no port.
 * Groups: 1 host, 2 database and user, 3 password.
 */
const PGPASS: Rule = {
  name: "pgpass",
  pattern: /:(?:\d{1,5}|\*):(?<=(?:^|\n|\\n|")([A-Za-z0-9.*_-]{1,253}):(?:\d{1,5}|\*):)([^\s:"'\\]{1,128}:[^\s:"'\\]{1,128}:)([^\s"'\\]{1,256})(?=\r?\n|\\[nr]|\\?"|$)/g,
  secret: (m) => {
    const [whole, host = "", , password = ""] = m;
    if (!/[A-Za-z.*]/.test(host) || password === "*" || isPlaceholder(password)) return null;
    return [whole.length - password.length, whole.length];
  },
};

/** An upper-case env name ending in `_KEY` (`STRIPE_KEY`, `OPENAI_KEY`): redacted when the value is random. */
const ENV_KEY: Rule = {
  name: "env-key",
  escapeBlind: true,
  // Starts at the literal `_KEY=` and reads the name back with a lookbehind.
  pattern: /_KEY=(?<=(?:^|[^A-Za-z0-9_]|\\[nrt])[A-Z][A-Z0-9_]{0,64}_KEY=)([^\s"'\x60\\,;]{16,512})(?![^\s"'\x60\\,;])/g,
  secret: (m) => {
    const value = m[1] ?? "";
    return /\d/.test(value) && /[A-Za-z]/.test(value) ? [5, 5 + value.length] : null;
  },
};

/** Docker's `config.json`: `"auth": "<base64 of user:password>"`. */
const DOCKER_AUTH: Rule = {
  name: "docker-auth",
  pattern: /("auth"\s*:\s*")([A-Za-z0-9+/]{6,1024}={0,2})(?=")/g,
  secret: group(2, (m) => isBasicCredential(m[2] ?? "")),
};

/** `.npmrc`: `_auth = <base64 of user:password>`, for the default registry or one (`//host/:_auth=…`). */
const NPMRC_AUTH: Rule = {
  name: "npmrc-auth",
  pattern: /(_auth(?<=(?:^|[\s:"']|\\[nrt])_auth)[ \t]*=[ \t]*)([A-Za-z0-9+/]{6,1024}={0,2})(?![A-Za-z0-9+/=])/g,
  secret: group(2, (m) => isBasicCredential(m[2] ?? "")),
};

/** Base64 that decodes to printable `user:password`. */
export function isBasicCredential(encoded: string): boolean {
  const decoded = Buffer.from(encoded, "base64").toString("latin1");
  return /^[\x20-\x7e]+:[\x20-\x7e]+$/.test(decoded);
}

export const KEY_RULES: readonly Rule[] = [ASSIGNMENT, SECRET_LIST, YAML_BLOCK_LIST, NAME_VALUE, CALL_ARGUMENT, SPACED_ENV, XML_ELEMENT, XML_KEY_VALUE, NETRC, PGPASS, ENV_KEY, DOCKER_AUTH, NPMRC_AUTH];
