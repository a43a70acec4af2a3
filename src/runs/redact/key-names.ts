import { REDACTED } from "./rule.ts";

/**
 * Secret names and the values stored under them: whether a key names a secret (it must END at a
 * secret word, so `max_tokens`, `tokenizer`, `password_hash`, `secret_santa` and `api_key_id`
 * survive), and whether a value assigned to one is a secret by its shape (`judgeValue`: code and
 * placeholders survive). The rules that find such assignments in text are keys.ts and key-lists.ts.
 */

/**
 * A suffix after a secret word that names an environment or a version (`DB_PASSWORD_PROD`,
 * `API_KEY_STAGING`, `PASSWORD_2`, `GITHUB_TOKEN_OLD`), or an encoding its value is written in
 * (`DB_PASSWORD_B64`, `clientSecretBase64`, `TOKEN_ENCODED`, `secret_hex`: decoded, it is the
 * secret): the name is still the secret's. Other suffixes make it another thing (`password_hash`,
 * `api_key_id`, `token_count`).
 */
const QUALIFIER_SOURCE = String.raw`(?:[_.-](?:prod|production|dev|development|staging|stage|stg|test|testing|live|sandbox|local|qa|uat|old|new|current|prev|previous|next|primary|secondary|backup|\d{1,2}|encoded|hex)|[_.-]?(?:b64|base64))`;
const QUALIFIER = new RegExp(`${QUALIFIER_SOURCE}$`, "i");
/** The name without such a suffix: what its secret word is judged by. */
export const unqualified = (key: string): string => key.replace(QUALIFIER, "");

const FOREIGN_PASSWORD = "passwort|kennwort|wachtwoord|senha|contrase(?:ñ|n)a|mot_?de_?passe|l(?:ö|o)senord|salasana|has(?:ł|l)o";

/**
 * Words a secret key name ends with, singular or plural (`passwords`, `api_keys`, `secrets`).
 * `pass` and `pwd` need more care: see `keyAllowed`; plurals too: see `judgeValue`.
 */
export const KEY_WORDS = `(?:${[
  "pass(?:word|wd|phrase|code)?",
  "pwd",
  // A password's name in other languages (German, Dutch, Portuguese, Spanish, French, Swedish, Finnish, Polish).
  FOREIGN_PASSWORD,
  "secret",
  "credential",
  "token",
  // A bearer token kept under its scheme's name (`KUBE_BEARER`, `bearer:`).
  "bearer",
  "apikey",
  "secret_key_base",
  // `<kind>_key`: kinds of key that are secret. `primary_key`, `sort_key`, `public_key` are not.
  "(?:api|access|secret|private|encryption|decryption|signing|master|auth|app|hmac|session|client|shared|account|storage|license|webhook|service|admin|deploy|jwt|aes|cipher|subscription|consumer|crypto|enc|write|ingest)[_.-]?key",
].join("|")})s?(?:${QUALIFIER_SOURCE})?`;

/** Needles (Rule.needles) of a rule that reads a name ending in KEY_WORDS: every such name holds one. */
export const KEY_WORD_NEEDLES: readonly string[] = ["pass", "pwd", "secret", "credential", "token", "bearer", "key", "wort", "woord", "senha", "contrase", "senord", "salasana", "hasło", "haslo"];

/** The whole key is a secret name (for object keys in `redactValue`). */
const KEY_NAME = new RegExp(`^[A-Za-z0-9_.$-]{0,128}?(?:${KEY_WORDS})$`, "i");

/**
 * A name whose value may name a Kubernetes Secret rather than hold one: Helm charts' `existingSecret`
 * (`auth.existingSecret: db-creds`, `existingPasswordSecret`), `envFromSecret`, `externalSecret`.
 * Its value is judged as any secret's, unless it is shaped like a Secret's name (`namesASecret`).
 */
const SECRET_REFERENCE_NAME = /(?:existing[A-Za-z0-9_-]{0,64}|(?:^|[._-]|[a-z])(?:from|external|sealed)[_-]?)secrets?$/i;

/**
 * A Kubernetes object's name: lower-case letters, digits, `-` and `.` (a DNS subdomain), in
 * short parts (`db-creds-2`, `postgresql-6f7g8h9k2m`, a release's name and a hash suffix). A value
 * with upper case or other punctuation, or a long run with no separator (32 hex digits, a random
 * lower-case password), names nothing: it is a secret under a name that sounded like a reference.
 */
const KUBERNETES_NAME = /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/;
const namesASecret = (value: string): boolean => KUBERNETES_NAME.test(value) && value.split(/[.-]/).every((part) => part.length <= 15);

/**
 * `pass` alone is an English word inside others (`bypass`, `compass`): it counts only as a whole
 * key or after a separator (`DB_PASS`, `db.pass`). `pwd` inside a name is the shell's working
 * directory (`OLDPWD`): it counts after a separator (`MYSQL_PWD`), as an ODBC field (`;Pwd=…`), or
 * as the whole name (`pwd: …` in YAML, `{"pwd": …}`), whose value judgeValue then tells from a
 * directory (BARE_PWD).
 */
export function keyAllowed(key: string, before: string): boolean {
  const base = unqualified(key);
  const lower = base.toLowerCase().replace(/pwds$/, "pwd");
  if (lower.endsWith("pwd")) return lower === "pwd" || /[_.-]pwd$/.test(lower) || before === ";";
  // camelCase counts too (`adminPass`, `dbPass`): `bypass` and `compass` are written in one case.
  if (lower.endsWith("pass")) return lower === "pass" || /[_.-]pass$/.test(lower) || /[a-z0-9]Pass$/.test(base);
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

export const PLACEHOLDER = /^(?:\*+|x+|X+|\.+|…+|•+|#+|-+|<.*>|\$\{.*\}|\{\{.*\}\}|%\(?\w+\)?s?|!\w+|\[REDACTED\]?)$/;

/** Documentation placeholders: `user:password@host`, `<password>`, `${DB_PASSWORD}`, `$PASS`, `****`. */
export function isPlaceholder(value: string): boolean {
  return PLACEHOLDER.test(value) || /^\$\w+$|^(?:your[_-]?)?(?:password|passwd|pass|pwd|pw|secret|token|api[_-]?key)$/i.test(value);
}

/** A filesystem path (credentials *files*), not a credential: `~/.ssh/id_rsa`, `/etc/app/key.pem`. */
const PATH = /^(?:~|\.{1,2})?\/[\w.@-]+(?:\/[\w.@-]+)*$/;
const looksLikePath = (value: string): boolean => PATH.test(value) && /\/\.|\.\w{1,5}$/.test(value);

export const PASSWORD_KEY = new RegExp(`(?:pass(?:word|wd|phrase|code)?s?|pwds?|${FOREIGN_PASSWORD})$`, "i");
/**
 * `pwd` as the whole name is a password's (`pwd: Tr0ub4dor3`) or the working directory's (`PWD=/home/dev`,
 * `pwd: /srv/app`, `{"pwd": "C:\\Users\\dev"}`): a value that reads as a directory, or a plain word,
 * stays, and no line of words after it is a passphrase.
 */
export const BARE_PWD = /^pwds?$/i;
const DIRECTORY = /^(?:[/~.\\]|[A-Za-z]:[\\/]|\$)/;
/** A plural name: no singular secret word ends in `s` but `pass`. */
export const PLURAL_KEY = /[^s]s$/i;
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
export function judgeValue({ key: written, op, spaced, value, endsLine }: Assignment): boolean {
  const key = unqualified(written);
  const quote = value[0];
  const quoted = quote === '"' || quote === "'" || quote === "`";
  const inner = quoted ? value.slice(1, -1) : value;
  const passwordKey = PASSWORD_KEY.test(key);
  if (inner.length < 3 || inner.startsWith(REDACTED.slice(0, -1))) return false; // too short, or already redacted
  if (SECRET_REFERENCE_NAME.test(key) && namesASecret(inner)) return false; // `existingSecret: db-creds`
  if (BARE_PWD.test(key) && (DIRECTORY.test(inner) || /^[A-Za-z]+$/.test(inner))) return false; // the working directory
  if (PLURAL_KEY.test(key) && (/^-?\d+(?:\.\d+)?$/.test(inner) || (TOKENS_KEY.test(key) && !looksLikeToken(inner)))) return false; // a count, a tokenizer's piece
  if (PLACEHOLDER.test(inner) || inner.startsWith("<") || CODE_WORDS.has(inner.toLowerCase())) return false;
  if (quote === "`" && inner.includes("${")) return false; // a template literal
  if (/^\$\{?[A-Za-z_]\w*\}?$/.test(inner)) return false; // a variable reference, quoted or not
  if (/(?:\.{3}|…)$/.test(inner)) return false; // an example cut short: `sk-ant-...`
  if (looksLikePath(inner)) return false;
  // A token, key or secret is never a short lower-case word: `apiKey: "ollama"` is a dummy value,
  // and a snake_case name is a secret's name (Compose's `secrets: [db_password]`). A password can
  // be a word (`"password": "sunshine"`).
  if (!passwordKey && (/^[a-z-]{3,15}$/.test(inner) || /^[a-z]+(?:_[a-z]+)+$/.test(inner))) return false;
  if (quoted) return true;
  if (/^[$|>{]|[([]|^\d{1,5}$/.test(inner)) return false; // shell expansion or a pipe, a flow map opening (`secrets: {db: …}`), a call or index, a small number
  if (/^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+$/.test(inner)) return false; // member expression, `a?.b` too
  if (op === ":" && /^[A-Za-z_$][\w$.]*<[\w$.[\]|<> ]*$/.test(inner)) return false; // a generic type annotation: `secrets: Record<string, string>`
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
 * A bare value in a store of secrets (`secrets: {db: hunter2}`, or the block map's `db: hunter2`),
 * judged as one stored under the store's name. It is the whole value, not prose after a colon, so
 * a short word with a digit (`hunter2`) counts, which the prose rule in judgeValue lets through.
 */
export function judgeStoreValue(store: string, value: string): boolean {
  return judgeValue({ key: store, op: ":", spaced: true, value, endsLine: true }) || (/^[A-Za-z0-9]{3,7}$/.test(value) && /\d/.test(value) && /[A-Za-z]/.test(value));
}
