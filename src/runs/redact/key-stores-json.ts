import { LIST_MAX_CHARS, LIST_MAX_ITEMS } from "./key-lists.ts";
import { isSecretKeyName, judgeStoreValue, judgeValue, KEY_WORD_NEEDLES, KEY_WORDS, PLURAL_KEY } from "./key-names.ts";
import { DECLARATION_FIELD, SECRET_DATA_NAME } from "./key-stores.ts";
import type { Finding, Rule } from "./rule.ts";

/**
 * Stores of secrets (see key-stores.ts) written as JSON text: `"secrets": {"db": "…"}`, and a
 * Kubernetes Secret as `kubectl get secret -o json` prints it.
 */

/** A JSON `"kind": "…"` field, for the kind of the object a `"data": {` belongs to. */
const JSON_KIND = /"kind"[ \t]*:[ \t]*"([A-Za-z]{1,64})"/g;
/** How far from a `"data": {` its object's `"kind"` is looked for (kubectl writes it after data). */
const KIND_REACH = 8 * 1024;

/** The `"kind"` fields of the last text asked about, flat [index, isSecret, …]: read once per text. */
let jsonKinds: { input: string; kinds: number[] } | undefined;

/** Whether the `"kind"` nearest to `at` (within KIND_REACH) is Secret. */
function nearestKindIsSecret(input: string, at: number): boolean {
  if (jsonKinds?.input !== input) {
    const kinds: number[] = [];
    if (input.includes('"kind"')) for (const kind of input.matchAll(JSON_KIND)) kinds.push(kind.index, kind[1] === "Secret" ? 1 : 0);
    jsonKinds = { input, kinds };
  }
  const kinds = jsonKinds.kinds;
  let low = 0;
  let high = kinds.length / 2 - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (kinds[2 * mid]! <= at) low = mid + 1;
    else high = mid - 1;
  }
  // `high` is the last kind before `at`, `low` the first after: the nearer one decides.
  const before = high >= 0 ? at - kinds[2 * high]! : Infinity;
  const after = low < kinds.length / 2 ? kinds[2 * low]! - at : Infinity;
  const nearest = before <= after ? high : low;
  return Math.min(before, after) <= KIND_REACH && kinds[2 * nearest + 1] === 1;
}

/** A JSON string at `at` (its opening quote): the index after its closing quote, or -1. */
function stringEnd(input: string, at: number, limit: number): number {
  for (let i = at + 1; i < limit && i - at <= 4096; i++) {
    const c = input[i];
    if (c === "\\") i++;
    else if (c === '"') return i + 1;
    else if (c === "\n") return -1;
  }
  return -1;
}

/** A list or object at `at` stepped over (strings read as strings): the index after its close, or -1. */
function nestedEnd(input: string, at: number, limit: number): number {
  let depth = 0;
  for (let i = at; i < limit; i++) {
    const c = input[i];
    if (c === "[" || c === "{") depth++;
    else if ((c === "]" || c === "}") && --depth === 0) return i + 1;
    else if (c === '"') {
      const end = stringEnd(input, i, limit);
      if (end === -1) return -1;
      i = end - 1;
    }
  }
  return -1;
}

const JSON_SPACE = /[ \t\r\n,]*/y;
/** A list or an object in a store is stepped over up to this many characters. */
const NESTED_MAX_CHARS = 1024;
const JSON_SCALAR = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/**
 * A YAML flow map's bare key (`{db: …}`), and a bare value running to the next `,` or `}`. A `;`
 * ends the reading: that is a type literal's member list (`{ user: string; password: string }`).
 */
const FLOW_KEY = /[^\s,:{}[\]"'#][^\s,:{}[\]"']{0,127}/y;
const FLOW_PLAIN = /[^\s,{}[\]"'#;][^,{}[\]\n"'\\;]{0,4095}?(?=[ \t]*[,}])/y;
/** After a JSON scalar, what may follow it: else it was the start of a bare value (`123abc`). */
const SCALAR_ENDS = /[\s,}]/;

/** A quoted string at `at` (its opening quote, `"` or YAML's `'`): the index after its closing quote, or -1. */
function quotedEnd(input: string, at: number, limit: number): number {
  if (input[at] === '"') return stringEnd(input, at, limit);
  for (let i = at + 1; i < limit && i - at <= 4096; i++) {
    const c = input[i];
    if (c === "'") {
      if (input[i + 1] !== "'") return i + 1;
      i++; // YAML writes a quote inside single quotes as two
    } else if (c === "\n") return -1;
  }
  return -1;
}

/**
 * An object under a store's name, written as text: JSON's `"secrets": {"db": "…"}`, a YAML flow
 * map's `secrets: {db: hunter2, api: 'x'}` (bare keys and values too), the `"data"` of a `kubectl
 * get secret -o json` (its `"kind"` is Secret). Each string value is judged as one stored under the
 * store's name and redacted inside its quotes (a bare value whole, judged as the whole value it is),
 * in nested objects too (up to four deep), except in an object with a declaration's field; a field
 * with a secret name of its own is the assignment rule's. Lists are stepped over (a list under a
 * secret name is key-lists.ts's). Bounded as lists are; what was read is not read again.
 * Groups: 1 the quote before the key, 2 the key, 3 the quote after it.
 */
export const JSON_STORE_OBJECT: Rule = {
  name: "json-store-object",
  needles: [...KEY_WORD_NEEDLES, "data"],
  pattern: new RegExp(String.raw`\{(?<=(?:^|[^A-Za-z0-9_.-]|\\[nrt])(["']?)([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}|data|stringData))(["']?)[ \t]*:[ \t]*\{)`, "gi"),
  findings: (m, quoting) => {
    const key = m[2] ?? "";
    // A quoted key's quotes must pair (a backreference in a lookbehind is read before its group);
    // a quote before a bare key opens the string it sits in (`"content":"secrets: {…`).
    if (m[3] !== "" && m[1] !== m[3]) return [];
    const input = m.input;
    const kubernetes = key === "data" || key === "stringData";
    if (kubernetes ? !nearestKindIsSecret(input, m.index) : !(isSecretKeyName(key) && PLURAL_KEY.test(key))) return [];
    const store = kubernetes ? SECRET_DATA_NAME : key;
    const limit = Math.min(input.length, m.index + LIST_MAX_CHARS);
    const found: Finding[] = [];
    let items = 0;
    let reached = m.index + 1; // how far the reading got: a match inside it is not tried again
    /** Reads the object opening at `open`; returns the index after its `}`, or -1 where the reading stopped. */
    const object = (open: number, depth: number): number => {
      const mine: Finding[] = [];
      let declaration = false;
      let i = open + 1;
      for (;;) {
        JSON_SPACE.lastIndex = i;
        JSON_SPACE.exec(input);
        i = JSON_SPACE.lastIndex;
        reached = Math.max(reached, i);
        if (i >= limit || items++ >= LIST_MAX_ITEMS) return -1;
        if (input[i] === "}") {
          if (!declaration) found.push(...mine);
          return i + 1;
        }
        let field: string;
        let keyEnd: number;
        if (input[i] === '"' || input[i] === "'") {
          keyEnd = quotedEnd(input, i, limit);
          if (keyEnd === -1) return -1;
          field = input.slice(i + 1, keyEnd - 1);
        } else {
          FLOW_KEY.lastIndex = i;
          const bare = FLOW_KEY.exec(input)?.[0];
          if (bare === undefined) return -1;
          field = bare;
          keyEnd = i + bare.length;
        }
        if (DECLARATION_FIELD.test(field)) declaration = true;
        JSON_SPACE.lastIndex = keyEnd;
        JSON_SPACE.exec(input);
        i = JSON_SPACE.lastIndex;
        if (input[i] !== ":") return -1;
        JSON_SPACE.lastIndex = i + 1;
        JSON_SPACE.exec(input);
        i = JSON_SPACE.lastIndex;
        const c = input[i];
        if (c === '"' || c === "'") {
          const end = quotedEnd(input, i, limit);
          if (end === -1) return -1;
          const value = input.slice(i, end);
          if (!isSecretKeyName(field) && quoting.sameQuoting(i, end - 1) && judgeValue({ key: store, op: ":", spaced: true, value, endsLine: false })) {
            mine.push({ start: i + 1 - m.index, end: end - 1 - m.index });
          }
          i = end;
        } else if (c === "{" && !kubernetes && depth < 4) {
          i = object(i, depth + 1);
          if (i === -1) return -1;
        } else if (c === "[" || c === "{") {
          const from = i;
          i = nestedEnd(input, i, Math.min(limit, i + NESTED_MAX_CHARS));
          if (i === -1) {
            reached = Math.min(limit, from + NESTED_MAX_CHARS);
            return -1;
          }
        } else {
          JSON_SCALAR.lastIndex = i;
          if (JSON_SCALAR.exec(input) !== null && SCALAR_ENDS.test(input[JSON_SCALAR.lastIndex] ?? "")) {
            i = JSON_SCALAR.lastIndex;
            continue;
          }
          FLOW_PLAIN.lastIndex = i;
          const plain = FLOW_PLAIN.exec(input)?.[0];
          if (plain === undefined) return -1; // neither JSON nor a flow map: the reading ends
          if (!isSecretKeyName(field) && judgeStoreValue(store, plain)) {
            mine.push({ start: i - m.index, end: i + plain.length - m.index });
          }
          i += plain.length;
        }
      }
    };
    const end = object(m.index, 0);
    JSON_STORE_OBJECT.pattern.lastIndex = Math.max(JSON_STORE_OBJECT.pattern.lastIndex, end === -1 ? reached : end);
    return found;
  },
};
