// VM source of the script's globals (prelude.ts puts it after the JSON boundary): a fixed clock and a
// seeded Math.random, agent() and the requests it sends, args, tools, store(), load(), text() and
// console. It runs with the prelude's private bindings (prelude-host.ts, prelude-json.ts).

/** The script's globals and request(), as the prelude's core defines them. */
export const SCRIPT_GLOBALS = String.raw`
// Run-specific values, installed by configure() below when the run arrives.
let config;
let now;
let sa, sb, sc, sd;

// Determinism: no GC-timed callbacks, a fixed clock and a seeded Math.random.
delete g.WeakRef;
delete g.FinalizationRegistry;
delete g.SharedArrayBuffer;
const RealDate = Date;
const construct = Reflect.construct;
const dateToString = RealDate.prototype.toString;
function FlowDate(...values) {
  if (new.target === undefined) return apply(dateToString, new RealDate(now), []);
  return construct(RealDate, values.length === 0 ? [now] : values, new.target);
}
FlowDate.prototype = RealDate.prototype;
Object.defineProperty(RealDate.prototype, "constructor", { value: FlowDate, writable: true, configurable: true });
FlowDate.now = () => now;
FlowDate.parse = RealDate.parse;
FlowDate.UTC = RealDate.UTC;
define("Date", FlowDate);
const random = function random() {
  // sfc32
  sa >>>= 0; sb >>>= 0; sc >>>= 0; sd >>>= 0;
  const t = (sa + sb) | 0;
  sa = sb ^ (sb >>> 9);
  sb = (sc + (sc << 3)) | 0;
  sc = (sc << 21) | (sc >>> 11);
  sd = (sd + 1) | 0;
  const r = (t + sd) | 0;
  sc = (sc + r) | 0;
  return (r >>> 0) / 4294967296;
};
Math.random = random;

// Host requests: the host answers later through deliver(), which settles the matching promise.
// Its methods are taken now (prelude-host.ts): a script that replaces Map.prototype.get still gets its answers.
const pending = new Map();
const mapGet = Map.prototype.get;
const mapSet = Map.prototype.set;
const mapDelete = Map.prototype.delete;
const CallSite = Error;
function request(kind, name, payload, what) {
  try {
    // The call's place in the script goes with it: a refusal the host raises names its line.
    const site = new CallSite().stack;
    const id = call("send", kind, name, toJson(payload, what), site);
    return new NativePromise((resolve, reject) => apply(mapSet, pending, [id, { __proto__: null, resolve, reject, site }]));
  } catch (error) {
    return rejected(error);
  }
}
host("register", function deliver(id, ok, text) {
  const entry = apply(mapGet, pending, [id]);
  if (entry === undefined) return;
  apply(mapDelete, pending, [id]);
  try {
    if (ok) entry.resolve(parse(text));
    else entry.reject(hostError(parse(text), entry.site));
  } catch (error) {
    entry.reject(error);
  }
});

function deepFreeze(value) {
  if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) deepFreeze(value[key]);
    Object.freeze(value);
  }
  return value;
}

// A placeholder until configure(): redefining a property keeps its place among the globals, so
// Object.getOwnPropertyNames(globalThis) lists args and tools where it always did.
define("args", undefined);

const isArray = Array.isArray;
define("agent", function agent(options) {
  // Array.isArray throws for a revoked proxy: agent() still only ever answers with a promise.
  let array;
  try {
    array = options !== null && typeof options === "object" && isArray(options);
  } catch (error) {
    return rejected(error);
  }
  if (options === null || typeof options !== "object" || array) {
    return rejected(new NativeTypeError("agent(options): options must be an object"));
  }
  return request("agent", "", options, "agent() options");
});

define("tools", undefined);

// A lone UTF-16 surrogate does not survive the way to the host's journal (it becomes U+FFFD), so
// two such keys would be one there and on resume: keys must be well-formed text. The method is
// taken now: a script that replaces it (or RegExp's) must not get such a key through. Nothing
// after this check can tell: QuickJS hands the worker the key with U+FFFD in place already.
const isWellFormed = String.prototype.isWellFormed;
const hasLoneSurrogate = (key) => !apply(isWellFormed, key, []);
define("store", function store(key, value) {
  if (typeof key !== "string" || key.length === 0) throw new NativeTypeError("store(key, value): key must be a non-empty string");
  if (hasLoneSurrogate(key)) throw new NativeTypeError("store(key, value): key holds a lone UTF-16 surrogate; use well-formed text");
  call("store", key, value === undefined ? undefined : toJson(value, "store() value"));
});
define("load", function load(key) {
  if (typeof key !== "string") throw new NativeTypeError("load(key): key must be a string");
  if (hasLoneSurrogate(key)) throw new NativeTypeError("load(key): key holds a lone UTF-16 surrogate; use well-formed text");
  const text = call("load", key);
  return text === null ? undefined : parse(text);
});

define("text", function text(value) {
  call("out", inspect(value));
});
const line = (...values) => {
  let text = "";
  for (let i = 0; i < values.length; i++) text += (i === 0 ? "" : " ") + inspect(values[i]);
  call("out", text + "\n");
};
define("console", Object.freeze({ log: line, info: line, warn: line, error: line, debug: line }));
`;
