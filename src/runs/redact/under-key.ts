// How a value is judged by the key it sits under, in a structured value (`{ "password": "…" }`,
// a headers object's `authorization`, a Docker config's `auth`, a wallet's `mnemonic`): index.ts
// walks values and asks here. The verdict per key name is remembered.
import { foldedName } from "./confusables.ts";
import { redactString } from "./engine.ts";
import { COOKIE_ATTRIBUTE, cookieSecret, GENERIC_SESSION_NAME, genericSessionSecret, SESSION_COOKIE_NAME } from "./cookies.ts";
import { isSecretKeyName, judgeValue } from "./key-names.ts";
import { isBasicCredential } from "./keys.ts";
import { looksRandom, REDACTED } from "./rule.ts";
import { isSeedPhrase, SEED_PHRASE_NAME } from "./seed-phrases.ts";

/**
 * What a key name says about the string under it. Names come from a small vocabulary (`type`,
 * `text`, `id`, `timestamp`…) and every string of every line is judged by its key, so the verdict
 * is remembered by name; the memo forgets everything when full, so odd names cannot grow it.
 */
type KeyVerdict = "auth" | "authorization" | "cookie" | "cookies" | "secret" | "phrase" | "session" | "plain";
const KEY_VERDICTS_MAX = 4096;
const keyVerdicts = new Map<string, KeyVerdict>();

export function keyVerdict(key: string): KeyVerdict {
  let verdict = keyVerdicts.get(key);
  if (verdict === undefined) {
    // Judged as it reads: `pаssword` with a Cyrillic `а` is a password's name (confusables.ts).
    const name = foldedName(key);
    const lower = name.toLowerCase();
    verdict =
      lower === "auth"
        ? "auth"
        : AUTHORIZATION_KEY.test(lower)
          ? "authorization"
          : COOKIE_KEY.test(lower)
            ? "cookie"
            : lower === "cookies"
              ? "cookies"
              : isSecretKeyName(name) || SESSION_COOKIE_NAME.test(name)
                ? "secret"
                : SEED_PHRASE_NAME.test(name)
                  ? "phrase"
                  : GENERIC_SESSION_NAME.test(name)
                    ? "session"
                    : "plain";
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
export function secretUnderKey(key: string, item: string): boolean {
  const verdict = keyVerdict(key);
  if (verdict === "auth") return isBasicCredential(item); // Docker's config.json
  // As the `Authorization:` header line is judged (auth.ts): a scheme and a value, or a long random value.
  if (verdict === "authorization") return SCHEMED_CREDENTIAL.test(item) || (item.length >= 16 && looksRandom(item));
  // As the `Cookie:` header line is judged: a value holding a session cookie goes whole (a list of cookies' `name=value` items too).
  if (verdict === "cookie" || verdict === "cookies") return redactString(`Cookie: ${item}`) !== `Cookie: ${item}`;
  // A wallet's seed phrase (seed-phrases.ts): the words, whole.
  if (verdict === "phrase") return isSeedPhrase(item);
  // A session id under a generic name (`sid`, `session`), as cookies.ts judges it in text.
  if (verdict === "session") return genericSessionSecret(item);
  return verdict === "secret" && judgeValue({ key: foldedName(key), op: ":", spaced: false, value: JSON.stringify(item), endsLine: true });
}

/**
 * A number under this key is a secret as `password: 83749212` is in text: a numeric password or
 * PIN read from YAML arrives as a number. Small numbers (a port, `pin: 1234`) survive, as in text.
 */
export function numberUnderKey(key: string, item: number): boolean {
  return Number.isFinite(item) && keyVerdict(key) === "secret" && judgeValue({ key: foldedName(key), op: ":", spaced: false, value: String(item), endsLine: true });
}

/** A seed phrase kept as a list of its words under a seed-phrase name (`{ "mnemonic": ["legal", "winner", …] }`): every word goes. */
export function isSeedWordList(key: string, value: unknown): value is unknown[] {
  return Array.isArray(value) && keyVerdict(key) === "phrase" && value.every((word) => typeof word === "string") && isSeedPhrase(value.join(" "));
}

/** A list under a secret name holds secrets as the name would hold one: `{ "password": ["…"] }`. */
export function itemUnderKey(key: string, item: unknown): boolean {
  if (typeof item === "string") return item !== REDACTED && secretUnderKey(key, item);
  return typeof item === "number" && numberUnderKey(key, item);
}

/**
 * The name a list or an object under `key` hands on, or undefined for a plain key. A list's items
 * (nested lists' too: `{ "password": [["…"]] }`) and an object's value field (`{ "tokens": [{
 * "value": "…" }] }`, `{ "client_secret": { "value": "…" } }`) are judged as stored under it; the
 * object's other fields are named by their own keys.
 */
export function containerName(key: string | undefined): string | undefined {
  // A generic session name holds an id, not a store: an object or list under `session` is named by its own keys.
  return key !== undefined && keyVerdict(key) !== "plain" && keyVerdict(key) !== "session" ? key : undefined;
}

/**
 * A `[name, value]` pair of strings (fetch's header entries, `[["x-api-key", "…"]]`): its value when
 * the name is a secret's and the value looks like a token (dumps.ts reads the same pairs in text),
 * else undefined. A list of field names (`["password", "username"]`) is no such pair.
 */
export function pairSecret(items: readonly unknown[]): string | undefined {
  if (items.length !== 2) return undefined;
  const [name, value] = items;
  if (typeof name !== "string" || typeof value !== "string" || value.length < 12 || /\s/.test(value) || !looksRandom(value)) return undefined;
  return keyVerdict(name) === "secret" && secretUnderKey(name, value) ? value : undefined;
}

/**
 * The name a cookie's entry gives its value (`{ name, value }` in a list of cookies: a HAR file's
 * request and response, Playwright's storage state; or with a cookie's attributes, `domain`,
 * `httpOnly`…: a browser's export): a secret's when the cookie is a session's or its value long
 * and random (cookies.ts), else none. `under` is the name the entry sits under.
 */
export function cookieEntryName(record: Record<string, unknown>, name: string, under: string | undefined): string | undefined {
  const value = record.value;
  if (typeof value !== "string" || !cookieSecret(name, value)) return undefined;
  return (under !== undefined && keyVerdict(under) === "cookies") || Object.keys(record).some((field) => COOKIE_ATTRIBUTE.test(field)) ? "session_token" : undefined;
}
