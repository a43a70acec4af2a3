// Seeded fuzz of the one-pass evidence line: `redactedJson(value)` must write exactly what the
// reference writes (`redactValue`: serialise, parse back, redact the parsed copy), for values of
// every shape JavaScript can hand it: String objects of any realm or prototype, raw JSON, toJSON,
// getters, proxies, null-prototype and class objects, holes, and secret-named keys in any case.
// `npm run fuzz` is the long mode (ten values per FUZZ_CASES).
import { runInNewContext } from "node:vm";
import { expect, test } from "vitest";
import { redactedJson, redactValue } from "../../src/runs/redact/index.ts";

const VALUES = Number(process.env.FUZZ_CASES ?? 500) * 10;
const SEED = Number(process.env.FUZZ_SEED ?? 20261202);

const KEY = "sk-ant-api03-" + "Xq7Lp2Vn9Rt4Wb6Yc1Hd8Jf3Kg5Mz0Ns-AA";
const AWS = "AKIA" + "1234567890ABCDEF";
const PASSWORD = "hunter2hunter2";
const DOCKER_AUTH = Buffer.from(`user:${PASSWORD}`).toString("base64");
const SECRETS = [KEY, AWS, PASSWORD, DOCKER_AUTH];

const TEXTS = [KEY, AWS, PASSWORD, DOCKER_AUTH, `token=${KEY}`, `password: ${PASSWORD}`, `{"password":"${PASSWORD}"}`, "[REDACTED]", "plain words", "", "2026-12-02T08:00:00Z", `\ud800${KEY}`, `${"x".repeat(70_000)} ${KEY}`];
const KEYS = ["password", "Password", "PASSWORD", "passwd", "db_pass", "bypass", "MYSQL_PWD", "token", "apiKey", "api_key", "API_KEY", "client_secret", "auth", "AUTH", "Auth", "__proto__", "", "0", "01", "text", "type", "toJSON", "max_tokens", "password_hash", `${"x".repeat(130)}password`];

/** A small seeded generator (an LCG): the same seed gives the same values on every machine. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

const rawJSON = (JSON as unknown as { rawJSON(text: string): object }).rawJSON;
const otherRealm = <T,>(source: string): T => runInNewContext(source) as T;

/** A String object dressed as a plain object, its text given by a conversion of its own. */
const disguised = (text: string, how: number): object =>
  Object.assign(Object.setPrototypeOf(new String("x"), Object.prototype) as object, how === 0 ? { toString: () => text } : { [Symbol.toPrimitive]: () => text });

function leaf(next: () => number): unknown {
  const text = TEXTS[Math.floor(next() * TEXTS.length)]!;
  switch (Math.floor(next() * 11)) {
    case 0: return new String(text);
    case 1: return new (class Text extends String {})(text);
    case 2: return otherRealm(`new String(${JSON.stringify(text)})`);
    case 3: return rawJSON(JSON.stringify(text));
    case 4: return otherRealm(`JSON.rawJSON(${JSON.stringify(JSON.stringify(text))})`);
    case 5: return { toJSON: () => text };
    case 6: return { toJSON: () => new String(text) };
    case 7: return disguised(text, Math.floor(next() * 2));
    case 8: return [1, -0, 1e21, null, true, undefined, () => 1, Number.NaN, new Number(3), new Date(0), rawJSON("12")][Math.floor(next() * 11)];
    default: return text;
  }
}

function value(next: () => number, depth = 0): unknown {
  if (depth > 3 || next() < 0.35) return leaf(next);
  const kind = Math.floor(next() * 7);
  const size = Math.floor(next() * 4);
  if (kind === 0) {
    const items: unknown[] = Array.from({ length: size }, () => value(next, depth + 1));
    if (next() < 0.3) items[size + 2] = value(next, depth + 1); // holes
    return items;
  }
  const object: Record<string, unknown> =
    kind === 1 ? (Object.create(null) as Record<string, unknown>) : kind === 2 ? otherRealm("({})") : kind === 3 ? (new (class Entry {})() as Record<string, unknown>) : {};
  for (let i = 0; i < size; i++) {
    Object.defineProperty(object, KEYS[Math.floor(next() * KEYS.length)]!, { value: value(next, depth + 1), enumerable: true, configurable: true, writable: true });
  }
  if (kind === 4) {
    const held = value(next, depth + 1);
    Object.defineProperty(object, KEYS[Math.floor(next() * KEYS.length)]!, { get: () => held, enumerable: true, configurable: true });
  }
  return kind === 5 ? new Proxy(object, {}) : object;
}

const written = (line: () => string | undefined): string => {
  try {
    return line() ?? "(nothing)";
  } catch (error) {
    return `throws ${error instanceof Error ? error.name : String(error)}`;
  }
};

test(`${VALUES} generated values: the one-pass line is the reference's, and keeps no secret it redacted`, { timeout: 0 }, () => {
  const next = random(SEED);
  const differing: string[] = [];
  for (let i = 0; i < VALUES; i++) {
    const generated = value(next);
    const reference = written(() => JSON.stringify(redactValue(generated).value));
    const line = written(() => redactedJson(generated));
    if (line !== reference) differing.push(`value ${i}: ${line.slice(0, 200)} | reference: ${reference.slice(0, 200)}`);
    for (const secret of SECRETS) if (line.includes(secret) && !reference.includes(secret)) differing.push(`value ${i} keeps ${secret.slice(0, 8)}…`);
  }
  expect(differing).toEqual([]);
});
