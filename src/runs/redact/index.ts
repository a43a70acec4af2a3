/**
 * Best-effort secret redaction: the one place that decides what looks like a secret. It is applied
 * at the source, before text is measured, sliced or written, so page budgets hold and a secret
 * split across a page boundary is still caught. It is pattern matching, not a guarantee: arbitrary
 * sensitive prose gets through. The rule tables live in ./redact/; the generated corpus in
 * test/runs/fixtures/secret-corpus.ts pins both directions (secrets that must go, look-alikes that
 * must survive) and docs/runs.md states its recall and false-positive figures. One text is
 * redacted in ./texts.ts (its memo, shared heads, key blocks over several texts); this module
 * redacts values: keys, strings judged by the key they sit under (./under-key.ts), lists and
 * name/value pairs.
 */
import { types } from "node:util";
import { foldedName } from "./confusables.ts";
import { argvItems } from "./argv.ts";
import { applySpans, findSecretSpans, redactString } from "./engine.ts";
import { PLURAL_KEY } from "./key-names.ts";
import { DECLARATION_FIELD, SECRET_DATA_NAME } from "./key-stores.ts";
import { REDACTED } from "./rule.ts";
import { containerName, cookieEntryName, isSeedWordList, itemUnderKey, keyVerdict, numberUnderKey, pairSecret, secretUnderKey } from "./under-key.ts";
import { continueKeyBlock, opensKeyBlock, PLAIN_SHAPE, redactedText, TwoGenerations, type KeyBlockText } from "./texts.ts";

export { REDACTED };
export { continueKeyBlock, redactText, rememberSharedHead, type KeyBlockText } from "./texts.ts";

/**
 * Deep-redact a JSON-like value: every string is redacted as text, and a string stored under a
 * secret-named key (`{ "password": "hunter2" }`) is replaced whole, since no pattern in the string
 * alone can tell. Returns a fresh JSON-safe copy (the canonical form: what JSON.stringify keeps).
 */
export function redactValue(value: unknown): { value: unknown; changed: boolean } {
  const json = JSON.stringify(value);
  if (json === undefined) return { value: undefined, changed: false };
  return redactParsed(json);
}

/**
 * `value` redacted as it would be under `key` in an object: a string stored under a secret name
 * (`store("db_password", pw)`) is replaced whole, as `{ "db_password": pw }` would have it.
 */
export function redactValueUnder(key: string, value: unknown): unknown {
  const { value: redacted } = redactValue({ [key]: value });
  const under = redacted === undefined ? undefined : Object.values(redacted as object)[0];
  markRedacted(under);
  return under;
}

/**
 * Lists and objects redactValueUnder returned, frozen: a line that holds one (a store line) does not
 * redact their strings and numbers again, which doubled the work of storing a list of 200,000 items.
 * Redaction is idempotent (test/runs/redact-corpus.test.ts), and frozen, they cannot have been given
 * a new string since.
 */
const redactedContainers = new WeakSet<object>();

function markRedacted(value: unknown): void {
  if (value === null || typeof value !== "object" || redactedContainers.has(value)) return;
  redactedContainers.add(Object.freeze(value));
  for (const item of Object.values(value)) markRedacted(item);
}

/**
 * `value` redacted and as one line of JSON: what a line of evidence writes. One pass, redacting each
 * string as JSON.stringify reaches it (after any toJSON, so exactly the strings the line holds), with
 * the same rules as `walk`: no parsed copy is made, and a text that repeats is the same string each
 * time, so the memo finds it without hashing a fresh copy.
 */
export function redactedJson(value: unknown): string | undefined {
  const outer = { rekeyed, listNames, openKeyBlocks, pairNames, storeNames };
  // This call's own: JSON.stringify may run a toJSON that serialises another value.
  rekeyed = undefined;
  listNames = undefined;
  openKeyBlocks = undefined;
  pairNames = undefined;
  storeNames = undefined;
  try {
    return JSON.stringify(value, redactingReplacer);
  } finally {
    ({ rekeyed, listNames, openKeyBlocks, pairNames, storeNames } = outer);
  }
}

/**
 * The copies with redacted keys made in the current redactedJson call, by original: an object met
 * again is given the same copy, so JSON.stringify still sees a cycle as one (and says so at once).
 */
let rekeyed: WeakMap<object, object> | undefined;

/**
 * In the current redactedJson call, the secret name each list is being written under, as `walk`
 * judges a list's items under the key that holds the list (or the list that holds it). JSON.stringify
 * writes depth first, so the name set when a list is reached holds while its items are written; a
 * list met again under another key is named anew.
 */
let listNames: WeakMap<object, string> | undefined;

/** In the current redactedJson call, the lists whose items written so far opened a private key block and did not end it. */
let openKeyBlocks: WeakSet<object> | undefined;

/**
 * In the current redactedJson call, the secret name each object's value field is judged under: a
 * name/value pair's own name (see pairName), else the secret name the object sits under.
 */
let pairNames: WeakMap<object, string> | undefined;

/** In the current redactedJson call, the store name each store's fields are judged under (see storeFor). */
let storeNames: WeakMap<object, string> | undefined;

/**
 * The name every field of `record` (the value of `key` in `holder`, judged under `name`) is judged
 * under when it is a store of secrets, or undefined. A store is a map under a plural secret name
 * (`secrets: { db: "…" }`, `credentials: { aws: { … } }`, `api_keys: { … }`), and the maps inside
 * it; or a Kubernetes Secret's `data` and `stringData`, whatever their keys are called. A map that
 * declares or refers to secrets (see DECLARATION_FIELD) is not one; a list's objects are not either
 * (their own keys name them, as `credentials: [{ user, password }]` does).
 */
function storeFor(name: string | undefined, record: object, holder: unknown, key: string): string | undefined {
  if (Array.isArray(record)) return undefined;
  if ((key === "data" || key === "stringData") && holder !== null && typeof holder === "object" && (holder as Record<string, unknown>).kind === "Secret") return SECRET_DATA_NAME;
  if (name === undefined || keyVerdict(name) !== "secret" || !PLURAL_KEY.test(foldedName(name))) return undefined;
  return Object.keys(record).some((field) => DECLARATION_FIELD.test(field)) ? undefined : name;
}

/** The name a field is judged under in a store: its own when that is a secret name, else the store's. */
function fieldName(store: string | undefined, key: string): string | undefined {
  return store !== undefined && (keyVerdict(key) === "plain" || keyVerdict(key) === "session") ? store : undefined;
}

/** The fields of a name/value pair (keys.ts's NAME_VALUE reads the same pairs in text). */
const PAIR_NAME_FIELD = /^(?:name|key|parameterkey)$/i;
const PAIR_VALUE_FIELD = /^(?:value|parametervalue)$/i;
/** The field of an object under a secret name that holds its secret: a pair's value, a mnemonic's phrase (ethers' `mnemonic: { phrase }`). */
const HELD_VALUE_FIELD = /^(?:value|parametervalue|phrase)$/i;

/** `az storage account keys list`'s objects: `{ keyName: "key1", permissions, value }`; the value is a storage key (keys.ts's AZURE_KEY_LIST reads them in text). */
const AZURE_KEY_NAME_FIELD = /^keyname$/i;
const AZURE_KEY_NAME = "storage_key";

/**
 * The secret name a name/value pair gives its value (`{ "name": "DB_PASSWORD", "value": "…" }`:
 * a Kubernetes or ECS env entry, an AWS parameter, a HAR file's `Cookie` or `Authorization` header),
 * or undefined when it is no such pair. The value is then judged as one stored under that name. In
 * a list of cookies (`under`), a session cookie's entry names its value a secret (cookieEntryName).
 */
function pairName(record: object, under?: string): string | undefined {
  const fields = record as Record<string, unknown>;
  let name: string | undefined;
  let valued = false;
  for (const field of Object.keys(record)) {
    if (PAIR_VALUE_FIELD.test(field)) valued = true;
    else if (AZURE_KEY_NAME_FIELD.test(field)) name = AZURE_KEY_NAME;
    else if (name === undefined && PAIR_NAME_FIELD.test(field)) {
      const given = fields[field];
      const text = typeof given === "string" ? given : given !== null && typeof given === "object" ? writtenAsPrimitive(given) : undefined;
      // A cookie named `session` is judged as a cookie (below), not as an id under a generic name.
      if (typeof text === "string" && keyVerdict(text) !== "plain" && keyVerdict(text) !== "session") name = text;
      else if (typeof text === "string") name = cookieEntryName(fields, text, under);
    }
  }
  return valued ? name : undefined;
}

function redactingReplacer(this: unknown, key: string, value: unknown): unknown {
  if ((typeof value === "string" || typeof value === "number") && redactedContainers.has(this as object)) return value;
  const inList = Array.isArray(this);
  // An array's items are keyed by index: they are judged by the name of the key holding the array.
  // A store's fields by the store's name, a pair's value by the pair's name.
  const name = inList
    ? listNames?.get(this as object)
    : (fieldName(storeNames?.get(this as object), key) ?? (HELD_VALUE_FIELD.test(key) ? pairNames?.get(this as object) : undefined) ?? key);
  let written: unknown = value;
  if (value !== null && typeof value === "object") {
    written = writtenAsPrimitive(value);
    if (written === undefined) {
      // A list or an object under a secret name hands the name on (see containerName).
      const under = containerName(name);
      if (!Array.isArray(value)) {
        const record = withRedactedKeys(value, (rekeyed ??= new WeakMap()));
        const named = pairName(record, under) ?? under;
        if (named !== undefined) (pairNames ??= new WeakMap()).set(record, named);
        else pairNames?.delete(record);
        const store = inList ? undefined : storeFor(name, record, this, key);
        if (store !== undefined) (storeNames ??= new WeakMap()).set(record, store);
        else storeNames?.delete(record);
        return record;
      }
      // A list of a command's arguments is read as the command line it is (argv.ts); a [name, value] pair as a setting.
      const list = argvItems(value, findSecretSpans, applySpans) ?? (pairSecret(value) !== undefined ? [value[0], REDACTED] : value);
      if (name !== undefined && isSeedWordList(name, list)) return list.map(() => REDACTED);
      if (under !== undefined) (listNames ??= new WeakMap()).set(list, under);
      else listNames?.delete(list);
      return list;
    }
  }
  if (typeof written === "number") return name !== undefined && numberUnderKey(name, written) ? REDACTED : value;
  if (typeof written !== "string") return value;
  if (inList) {
    // Items are written in order: a list of a key's lines is redacted as the key's text would be.
    const list = this as object;
    const open = openKeyBlocks?.has(list) ?? false;
    const next = open ? continueKeyBlock(written, true) : undefined;
    if (next?.open ?? opensKeyBlock(written)) (openKeyBlocks ??= new WeakSet()).add(list);
    else openKeyBlocks?.delete(list);
    if (next) return next.text;
  }
  if (name !== undefined && written !== REDACTED && secretUnderKey(name, written)) return REDACTED;
  return redactedText(written);
}

/** Objects JSON.stringify writes as text after the replacer has seen them: raw JSON text (`JSON.rawJSON`). */
const rawJson = JSON as unknown as { isRawJSON?: (value: unknown) => value is { rawJSON: string } };

/**
 * The text or number JSON.stringify writes for an object that is not written as an object: a
 * String or Number object (`new String("…")`, of any realm and whatever its prototype) or raw JSON
 * text holding a string or a number. Such a value reaches the replacer as an object and leaves it
 * as text or a number, so it is judged here, as a parsed copy's would be. All are told by brand,
 * which no prototype or tag can fake; the text is `String(value)`, what JSON itself would write
 * (a `toString` of its own included), the number `Number(value)`.
 */
function writtenAsPrimitive(value: object): string | number | undefined {
  if (Array.isArray(value)) return undefined;
  if (types.isStringObject(value)) return String(value);
  if (types.isNumberObject(value)) return Number(value);
  if (rawJson.isRawJSON?.(value)) {
    const parsed: unknown = JSON.parse(value.rawJSON);
    return typeof parsed === "string" || typeof parsed === "number" ? parsed : undefined;
  }
  return undefined;
}

function redactParsed(json: string): { value: unknown; changed: boolean } {
  const state = { changed: false };
  const walked = walk(JSON.parse(json) as unknown, state);
  return { value: walked, changed: state.changed };
}

/**
 * Key names redacted as text, remembered by name in two generations of their own: an object with
 * thousands of keys neither empties this memo nor pushes long texts out of the texts' memo. Long
 * names are not remembered.
 */
const KEY_MEMO_MAX_CHARS = 256;
const keyNames = new TwoGenerations(4096, 4096 * KEY_MEMO_MAX_CHARS);

function redactedKey(key: string): string {
  let out = keyNames.recall(key);
  if (out === undefined) {
    out = key.length <= 36 && PLAIN_SHAPE.test(key) ? key : redactString(key);
    if (key.length <= KEY_MEMO_MAX_CHARS) keyNames.remember(key, out);
  }
  return out;
}

/**
 * `record` itself when no key of it holds a secret, else a copy whose keys are redacted (a value a
 * script builds may be keyed by anything, a token included), in the same order. Two keys that
 * redact alike stay two: the later ones are numbered.
 */
function withRedactedKeys(record: object, copies?: WeakMap<object, object>): object {
  const made = copies?.get(record);
  if (made !== undefined) return made;
  const keys = Object.keys(record);
  const values = record as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const clean = redactedKey(key);
    if (copy === undefined) {
      if (clean === key) continue;
      copy = {};
      for (let j = 0; j < i; j++) defineData(copy, keys[j]!, values[keys[j]!]);
    }
    let name = clean;
    for (let n = 2; Object.hasOwn(copy, name); n++) name = `${clean} (${n})`;
    defineData(copy, name, values[key]);
  }
  if (copy === undefined) return record;
  copies?.set(record, copy);
  return copy;
}

/** defineProperty, not assignment: a "__proto__" key must stay data, not a prototype. */
function defineData(record: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Redacts the strings of a freshly parsed JSON value in place: the parse made it, so no one else
 * holds it, and an entry with nothing to redact (the common case) costs no copy. An object with a
 * key to redact is replaced by a copy with redacted keys. `under` is the secret name the value sits
 * under (see containerName); `store`, the name each of its fields is judged under (see storeFor).
 */
function walk(value: unknown, state: { changed: boolean }, under?: string, store?: string): unknown {
  if (typeof value === "string") {
    const out = redactedText(value);
    if (out !== value) state.changed = true;
    return out;
  }
  if (Array.isArray(value)) {
    // A command's arguments, read as its command line; a [name, value] pair, as a setting.
    const argv = argvItems(value, findSecretSpans, applySpans) ?? (pairSecret(value) !== undefined ? [value[0] as string, REDACTED] : undefined);
    if (argv) {
      argv.forEach((item, i) => (value[i] = item));
      state.changed = true;
    }
    let keyBlock = false; // as the one-pass line reads a list of a key's lines: see continueKeyBlock
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === "string") {
        const next: KeyBlockText | undefined = keyBlock ? continueKeyBlock(item, true) : undefined;
        keyBlock = next?.open ?? opensKeyBlock(item);
        value[i] = next ? next.text : under !== undefined && itemUnderKey(under, item) ? REDACTED : walk(item, state);
      } else if (typeof item === "number") {
        if (under !== undefined && itemUnderKey(under, item)) value[i] = REDACTED;
      } else if (item !== null && typeof item === "object") value[i] = walk(item, state, under);
      if (value[i] !== item) state.changed = true;
    }
    return value;
  }
  if (value !== null && typeof value === "object") {
    const record = withRedactedKeys(value) as Record<string, unknown>;
    if (record !== value) state.changed = true;
    const named = pairName(record, under) ?? under;
    for (const key of Object.keys(record)) {
      const item = record[key];
      const name = fieldName(store, key) ?? (named !== undefined && HELD_VALUE_FIELD.test(key) ? named : key);
      if (typeof item === "string" || typeof item === "number") {
        const next = itemUnderKey(name, item) ? REDACTED : walk(item, state);
        if (next !== item) {
          state.changed = true;
          defineData(record, key, next);
        }
      } else if (isSeedWordList(name, item)) {
        state.changed = true;
        defineData(record, key, item.map(() => REDACTED));
      } else if (item !== null && typeof item === "object") {
        const next = walk(item, state, containerName(name), storeFor(name, item, record, key));
        if (next !== item) defineData(record, key, next);
      }
    }
    return record;
  }
  return value;
}
