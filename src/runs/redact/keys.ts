import { BARE_KEY } from "./bare-key.ts";
import { namesASecret } from "./cli-args.ts";
import { DEFAULT_RULES } from "./defaults.ts";
import { DUMP_RULES } from "./dumps.ts";
import { LIST_MAX_CHARS, LIST_MAX_ITEMS, SECRET_LIST, YAML_BLOCK_LIST } from "./key-lists.ts";
import { BARE_PWD, isPlaceholder, judgeValue, KEY_WORD_NEEDLES, KEY_WORDS, keyAllowed, PASSWORD_KEY, PLACEHOLDER, PLURAL_KEY, unqualified } from "./key-names.ts";
import { JSON_STORE_OBJECT } from "./key-stores-json.ts";
import { YAML_STORE_MAP } from "./key-stores.ts";
import { type Finding, group, type Quoting, REDACTED, type Rule } from "./rule.ts";
import { shellWordFinding } from "./shell-word.ts";

/**
 * Secrets known by the name they are stored under: `DB_PASS=…`, `"apiKey": "…"`,
 * `ENCRYPTION_KEY=…`, `<password>…</password>`, `auth` in a Docker config. A key must END at a
 * secret word, so `max_tokens`, `tokenizer`, `password_hash`, `secret_santa` and `api_key_id`
 * survive. The value's shape then decides (`judgeValue`, key-names.ts): code and placeholders
 * survive. Lists under a secret name are key-lists.ts's.
 */

/**
 * An unquoted value runs to whitespace or a delimiter. It stops before an escape sequence (`\"`,
 * `\n` of an escaped string) and before `&name=` (the next URL query parameter), but keeps a
 * lone `&` (`Tr0ub4dor&3`).
 */
const UNQUOTED = String.raw`(?:[^\s"'\x60\\,;)}\]&]|&(?![\w.-]{1,64}=)|\\(?![\\"'/nrtbfu]))+`;
/**
 * A backtick-quoted value must not open with a space or punctuation: that is markdown closing code.
 * A single-quoted one may hold a quote written twice (YAML's and SQL's `'it''s-s3cret'`), and may
 * be the shell's ANSI-C quoting (`export DB_PASSWORD=$'pa\'ss'`): the `$` is no part of the value.
 * A double-quoted one may be TOML's or Python's triple-quoted string on one line.
 */
const VALUE = String.raw`("""(?:[^"\\\n]|\\.|"(?!"")){1,4096}"""|"(?:[^"\\\n]|\\.){0,4096}"|\$?'(?:[^'\\\n]|\\.|''){0,4096}'|\x60[^\x60\s,;.)][^\x60\n]{0,4095}\x60|${UNQUOTED})`;

/**
 * The pattern starts at the operator, the rarest character of an assignment, and reads the key
 * back with a lookbehind: starting at every word instead was the slowest rule by far.
 * Groups: 1 key, 2 closing quote of the key, 3 space, 4 rest of the operator, 5 space, 6 value.
 */
const ASSIGNMENT: Rule = {
  name: "assignment",
  needles: KEY_WORD_NEEDLES,
  pattern: new RegExp(
    String.raw`[:=](?<=(?:^|[^A-Za-z0-9_.-]|\\[nrt])([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}))(["']?\]?)([ \t]*)[:=])((?<=:)=|(?<==)>)?([ \t]*)${VALUE}`,
    "gi",
  ),
  findings: (m, quoting) => {
    const [, key = ""] = m;
    const joined = shellWord(m, quoting);
    if (joined) return [joined];
    const phraseRest = linePhraseRest(m, key);
    const span = assignmentSpan(m, quoting, phraseRest >= 0);
    if (!span) return [];
    // A number under a JSON key (`"password": 83749212`) is written as the string "[REDACTED]",
    // quoted as the key is, so the JSON stays valid.
    const [whole, , quote = "", pre = "", rest = "", post = "", value = ""] = m;
    if (quote === '"' && whole[0] + rest === ":" && JSON_NUMBER.test(value)) return [{ start: span[0], end: span[1], quoteAt: -pre.length - 1 }];
    const found: Finding[] = [{ start: span[0], end: span[1] + Math.max(0, phraseRest) }];
    // `API_KEYS=k1,k2`: a plural name's value may be a comma-separated list; each item is judged alike.
    if (PLURAL_KEY.test(key) && whole[0] + rest === "=" && pre + post === "" && m.input[m.index + whole.length] === ",") {
      found.push(...commaItems(m, key));
    }
    return found;
  },
};

/** `KEY='ghp_aB3'"dE5…"`, `KEY=hun''ter2`: a shell assignment whose value the shell joins from pieces (shell-word.ts). */
function shellWord(m: RegExpExecArray, quoting: Quoting): Finding | undefined {
  const [whole, key = "", quote = "", pre = "", rest = "", post = "", value = ""] = m;
  if (whole[0] + rest !== "=" || pre + post !== "" || /^(?:"""|\$')/.test(value)) return undefined;
  const before = m.input[m.index - key.length - quote.length - 1] ?? "";
  const end = m.index + whole.length;
  const word = shellWordFinding(m.input, quoting, m.index, { key, before, value, start: end - value.length, end });
  // The word is one value, whatever it holds: it is not read again (that keeps the rule linear).
  if (word) ASSIGNMENT.pattern.lastIndex = Math.max(ASSIGNMENT.pattern.lastIndex, word.readTo);
  return word?.finding;
}

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

/**
 * The words after a password's first, to its line's end (or its JSON string's) or to a comment
 * there (`# …`, INI's `; …`): ` horse battery staple`, or nothing when the first word ends the
 * line. A comment opens after whitespace, so no word of the phrase starts with `#`.
 */
const LINE_PHRASE_REST = /(?:[ \t](?!#)[A-Za-z0-9!@#$%^&._~]{3,64}){0,16}(?=(?:[ \t]+[#;][^\n\\"]*)?[ \t]*(?:\r?\n|\\[nr]|"|$))/y;
/** A line's start: the key follows a line break (real or escaped) and indentation, the text's start, or a JSON string's. */
const LINE_START = /(?:^|\n|\\n|")[ \t]*$/;
/** A capitalised word, as prose writes a label (`Password: must be …`): YAML keys and env names are not written so. */
const PROSE_LABEL = /^[A-Z][a-z]+$/;

/**
 * How far a password that opens its line runs past its first word to the line's end or comment
 * (0: it is one word; -1: it does not open a line of words). In INI's
 * `password = correct horse battery staple` (`.pypirc`, `my.cnf`), YAML's `password: correct horse
 * battery staple` and a `.env` file's `PASSWORD=two words` the value is the rest of the line; an
 * assignment in code is not a line of words (`password = a + b`, `= f(x) or y`), nor is prose with
 * short words (`password: must be at least 12 characters`).
 */
function linePhraseRest(m: RegExpExecArray, key: string): number {
  const [whole, , quote = "", pre = "", rest = "", post = "", value = ""] = m;
  const op = whole[0] + rest;
  if (/^["'\x60]/.test(value) || !PASSWORD_KEY.test(unqualified(key)) || BARE_PWD.test(key)) return -1;
  const ini = op === "=" && pre !== "" && post !== "";
  const env = op === "=" && pre === "" && post === "";
  const yaml = op === ":" && pre === "" && post !== "" && !PROSE_LABEL.test(key);
  if (!ini && !env && !yaml) return -1;
  const keyStart = m.index - key.length - quote.length - pre.length;
  if (!LINE_START.test(m.input.slice(Math.max(0, keyStart - 64), keyStart))) return -1;
  LINE_PHRASE_REST.lastIndex = m.index + whole.length;
  const more = LINE_PHRASE_REST.exec(m.input)?.[0];
  return more === undefined ? -1 : more.length;
}

/**
 * The secret value of an assignment match, as [start, end) relative to the match; null: none.
 * `phrase`: the value's first word opens a line of words, or is alone on it before a comment
 * (linePhraseRest), so it is judged as a value ending its line.
 */
function assignmentSpan(m: RegExpExecArray, quoting: Quoting, phrase: boolean): readonly [number, number] | null {
  const [whole, key = "", quote = "", pre = "", rest = "", post = "", written = ""] = m;
  // The shell's `$'…'` is judged as `'…'`; TOML's and Python's `"""…"""` as `"…"`, its outer two quotes each side kept.
  const triple = written.startsWith('"""') ? 2 : 0;
  const value = written.startsWith("$'") ? written.slice(1) : triple ? written.slice(triple, -triple) : written;
  const op = whole[0] + rest;
  // `=` but not `==`, `===` or `=~`; `=>` after a quoted key (Ruby, PHP hashes), a Ruby symbol
  // (`:password => …`) or before a quoted value (Perl's `password => '…'`), not an arrow function.
  if (op === "=" && /^[=~]/.test(value)) return null;
  if (op === "=>" && quote === "" && m.input[m.index - key.length - pre.length - 1] !== ":" && !/^["']/.test(value)) return null;
  const keyStart = m.index - key.length - quote.length - pre.length;
  if (!keyAllowed(key, m.input[keyStart - 1] ?? "")) return null;
  // `https://x-access-token:<token>@github.com/…`: the key is a URL's user and the value runs into
  // its host and path. The URL rule (auth.ts) takes the password alone.
  if (op === ":" && quote === "" && m.input.endsWith("//", keyStart)) return null;
  // `--secret=prod/db-password` names the secret a tool reads (see namesASecret).
  if (op === "=" && key.startsWith("-") && namesASecret(key, value)) return null;
  const end = m.index + whole.length;
  const after = m.input[end];
  const endsLine = phrase || after === undefined || after === "\n" || after === "\r" || /^\\[nr]/.test(m.input.slice(end, end + 2));
  if (!judgeValue({ key, op, spaced: pre !== "" || post !== "", value, endsLine })) return null;
  const close = whole.length - triple;
  const start = close - value.length;
  if (!/^["'\x60]/.test(value)) return [start, close];
  return quoting.sameQuoting(m.index + start, m.index + close - 1) ? [start + 1, close - 1] : null;
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
  needles: ["value"],
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

/** Calls that take a setting's name and then its value: PHP's define, environment defaults (`os.environ.get`, Ruby's `ENV.fetch`), .NET's and Java's setters, header and map setters. */
const SETTERS = "define|setdefault|getenv|setProperty|setenv|putenv|put|set|setHeader|header|get|fetch|SetEnvironmentVariable";

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
  needles: KEY_WORD_NEEDLES,
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
  needles: KEY_WORD_NEEDLES,
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
  needles: KEY_WORD_NEEDLES,
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
  needles: KEY_WORD_NEEDLES,
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
  needles: ["password"],
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
  minChars: "h:5:d:u:p".length, // host, port, database, user, password: one character each at least
  pattern: /:(?:\d{1,5}|\*):(?<=(?:^|\n|\\n|")([A-Za-z0-9.*_-]{1,253}):(?:\d{1,5}|\*):)([^\s:"'\\]{1,128}:[^\s:"'\\]{1,128}:)([^\s"'\\]{1,256})(?=\r?\n|\\[nr]|\\?"|$)/g,
  secret: (m) => {
    const [whole, host = "", , password = ""] = m;
    if (!/[A-Za-z.*]/.test(host) || password === "*" || isPlaceholder(password)) return null;
    return [whole.length - password.length, whole.length];
  },
};

/**
 * An upper-case env name ending in `_KEY` or `_AUTH` (`STRIPE_KEY`, `OPENAI_KEY`, `TWILIO_AUTH`):
 * redacted when the value is random (`SMTP_AUTH=login` survives).
 */
const ENV_KEY: Rule = {
  name: "env-key",
  needles: ["_KEY=", "_AUTH="],
  escapeBlind: true,
  // Starts at the literal `_KEY=` or `_AUTH=` and reads the name back with a lookbehind.
  pattern: /(_(?:KEY|AUTH)=)(?<=(?:^|[^A-Za-z0-9_]|\\[nrt])[A-Z][A-Z0-9_]{0,64}_(?:KEY|AUTH)=)([^\s"'\x60\\,;]{16,512})(?![^\s"'\x60\\,;])/g,
  secret: group(2, (m) => /\d/.test(m[2] ?? "") && /[A-Za-z]/.test(m[2] ?? "")),
};

/**
 * A storage account's keys as `az storage account keys list` prints them: `{"keyName": "key1",
 * "permissions": "FULL", "value": "<base64>"}`. The name (`key1`, `kerb2`) says nothing; the
 * object's `keyName` says its `value` is a key.
 */
const AZURE_KEY_LIST: Rule = {
  name: "azure-key-list",
  needles: ['"keyName"'],
  pattern: /("keyName"\s{0,16}:\s{0,16}"[^"\n]{1,64}"(?:\s{0,16},\s{0,16}"[A-Za-z]{1,32}"\s{0,16}:\s{0,16}(?:"[^"\n]{0,64}"|null|true|false)){0,4}\s{0,16},\s{0,16}"value"\s{0,16}:\s{0,16}")([A-Za-z0-9+/]{40,128}={0,2})(?=")/g,
  secret: group(2),
};

/**
 * The same keys in `-o tsv` and `-o table` output: a row `[creation time] key1 FULL <base64>`, its
 * fields apart by tabs or spaces (an escaped `\t` in a JSON string). The key is 64 random bytes, so
 * its base64 has both letter cases and a digit.
 */
const AZURE_KEY_ROW: Rule = {
  name: "azure-key-row",
  needles: ["key", "kerb"],
  pattern: /((?:key|kerb)(?<=(?:^|[^A-Za-z0-9_]|\\[nrt])(?:key|kerb))[12](?:[ \t]|\\t){1,32}(?:FULL|READ|Full|Read)(?:[ \t]|\\t){1,32})([A-Za-z0-9+/]{40,128}={0,2})(?![A-Za-z0-9+/=])/g,
  secret: group(2, (m) => /[A-Z]/.test(m[2] ?? "") && /[a-z]/.test(m[2] ?? "") && /\d/.test(m[2] ?? "")),
};

/** Docker's `config.json`: `"auth": "<base64 of user:password>"`. */
const DOCKER_AUTH: Rule = {
  name: "docker-auth",
  needles: ['"auth"'],
  pattern: /("auth"\s*:\s*")([A-Za-z0-9+/]{6,1024}={0,2})(?=")/g,
  secret: group(2, (m) => isBasicCredential(m[2] ?? "")),
};

/** `.npmrc`: `_auth = <base64 of user:password>`, for the default registry or one (`//host/:_auth=…`). */
const NPMRC_AUTH: Rule = {
  name: "npmrc-auth",
  needles: ["_auth"],
  pattern: /(_auth(?<=(?:^|[\s:"']|\\[nrt])_auth)[ \t]*=[ \t]*)([A-Za-z0-9+/]{6,1024}={0,2})(?![A-Za-z0-9+/=])/g,
  secret: group(2, (m) => isBasicCredential(m[2] ?? "")),
};

/** Base64 that decodes to printable `user:password`. */
export function isBasicCredential(encoded: string): boolean {
  const decoded = Buffer.from(encoded, "base64").toString("latin1");
  return /^[\x20-\x7e]+:[\x20-\x7e]+$/.test(decoded);
}

export const KEY_RULES: readonly Rule[] = [ASSIGNMENT, BARE_KEY, SECRET_LIST, YAML_BLOCK_LIST, YAML_STORE_MAP, JSON_STORE_OBJECT, NAME_VALUE, CALL_ARGUMENT, SPACED_ENV, XML_ELEMENT, XML_KEY_VALUE, NETRC, PGPASS, ENV_KEY, DOCKER_AUTH, NPMRC_AUTH, AZURE_KEY_LIST, AZURE_KEY_ROW, ...DEFAULT_RULES, ...DUMP_RULES];
