// The JavaScript that runs inside each VM before the script: it takes the single host function,
// hides it, and defines the script's globals and helpers on top of it. Everything it sends to
// the host is JSON text, so host code never touches a VM object. It runs in two steps: the
// prelude proper, the same for every run (an idle worker evaluates it ahead of its next run), and
// configure(), which installs one run's args, tools, clock and seed before the script starts.
import { HELPERS } from "../helpers/index.ts";
import { DISCOVERY } from "./prelude-discovery.ts";
import { JSON_BOUNDARY } from "./prelude-json.ts";

const CORE = String.raw`
const host = g.__flow_host;
delete g.__flow_host;
const stringify = JSON.stringify;
const parse = JSON.parse;
const defineProperty = Object.defineProperty;
const define = (name, value) => defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });

// Rarely used globals (the helpers, tool discovery) are not compiled until a script first touches
// one: compiling source is most of a run's start-up, and most runs use few of them. The host holds
// each chunk's source and hands it over on first use. A chunk is a function of the prelude's
// private bindings; eval is taken now, so a script that replaces it (or Object.defineProperty)
// still gets the real helpers. Reading a name compiles its chunk once and turns the name into a
// plain data property; assigning it first just sets that property.
const evaluate = g.eval;
function lazy(names, index) {
  let exports;
  const load = (name) => {
    if (exports === undefined) exports = evaluate(call("chunk", index))(FlowError, stringify, parse, request);
    return exports[name];
  };
  for (const name of names) {
    defineProperty(g, name, {
      get() {
        const value = load(name);
        define(name, value);
        return value;
      },
      set(value) {
        define(name, value);
      },
      configurable: true,
      enumerable: false,
    });
  }
}

class FlowError extends Error {
  constructor(message, code, runId) {
    super(message);
    this.name = "FlowError";
    if (code !== undefined) this.code = code;
    if (runId !== undefined) this.runId = runId;
  }
}

// Errors the runtime raised for a limit, by object, with the limit's name. Only these end a run
// as kind "limit": a script can copy a code, not membership here. The methods are taken now, so
// a script that patches WeakMap.prototype cannot forge it.
const limitErrors = new WeakMap();
const apply = Reflect.apply;
const weakGet = WeakMap.prototype.get;
const weakSet = WeakMap.prototype.set;

// The host's own fields only: a script that puts "limit" on Object.prototype must not make every
// host refusal a limit error.
const hasOwn = Object.hasOwn;
// site: the frames of the script's call, for an answer that arrives later, when no frame of the
// script is on the stack (without it, the run's error would name no line).
function hostError(reply, site) {
  const e = (key) => (hasOwn(reply, key) ? reply[key] : undefined);
  const error = e("name") === "TypeError" ? new TypeError(e("message"))
    : e("name") === "RangeError" ? new RangeError(e("message"))
    : new FlowError(e("message"));
  if (site !== undefined) defineProperty(error, "stack", { value: site, writable: true, configurable: true, enumerable: false });
  if (e("code") !== undefined) error.code = e("code");
  if (e("runId") !== undefined) error.runId = e("runId");
  if (typeof e("limit") === "string") apply(weakSet, limitErrors, [error, e("limit")]);
  return error;
}

// Host calls answer {ok, value} or {ok: false, error}; a refused call throws here, in the script.
// The total length lets the host notice a string QuickJS could not hand over (out of memory).
function call(op, a, b, c, site) {
  const chars = (typeof a === "string" ? a.length : 0) + (typeof b === "string" ? b.length : 0) + (typeof c === "string" ? c.length : 0);
  const reply = parse(host(op, a, b, c, chars, site));
  if (reply.ok) return reply.value;
  const error = hostError(reply.error);
  // A refusal that ended the run (a call or output limit): the host learns which line made the call.
  if (reply.error.ends === true) host("ended_at", error.stack);
  throw error;
}

${JSON_BOUNDARY}

// Run-specific values, installed by configure() below when the run arrives.
let config;
let now;
let sa, sb, sc, sd;

// Determinism: no GC-timed callbacks, a fixed clock and a seeded Math.random.
delete g.WeakRef;
delete g.FinalizationRegistry;
delete g.SharedArrayBuffer;
const RealDate = Date;
function FlowDate(...values) {
  if (new.target === undefined) return new RealDate(now).toString();
  return Reflect.construct(RealDate, values.length === 0 ? [now] : values, new.target);
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
const pending = new Map();
const CallSite = Error;
function request(kind, name, payload, what) {
  try {
    // The call's place in the script goes with it: a refusal the host raises names its line.
    const site = new CallSite().stack;
    const id = call("send", kind, name, toJson(payload, what), site);
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject, site }));
  } catch (error) {
    return Promise.reject(error);
  }
}
host("register", function deliver(id, ok, text) {
  const entry = pending.get(id);
  if (entry === undefined) return;
  pending.delete(id);
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

define("agent", function agent(options) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    return Promise.reject(new TypeError("agent(options): options must be an object"));
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
  if (typeof key !== "string" || key.length === 0) throw new TypeError("store(key, value): key must be a non-empty string");
  if (hasLoneSurrogate(key)) throw new TypeError("store(key, value): key holds a lone UTF-16 surrogate; use well-formed text");
  call("store", key, value === undefined ? undefined : toJson(value, "store() value"));
});
define("load", function load(key) {
  if (typeof key !== "string") throw new TypeError("load(key): key must be a string");
  if (hasLoneSurrogate(key)) throw new TypeError("load(key): key holds a lone UTF-16 surrogate; use well-formed text");
  const text = call("load", key);
  return text === null ? undefined : parse(text);
});

define("text", function text(value) {
  call("out", inspect(value));
});
const line = (...values) => call("out", values.map(inspect).join(" ") + "\n");
define("console", Object.freeze({ log: line, info: line, warn: line, error: line, debug: line }));

function errorInfo(error) {
  try {
    if (error !== null && typeof error === "object") {
      const info = {
        name: typeof error.name === "string" ? error.name : "Error",
        message: typeof error.message === "string" ? error.message : inspect(error),
        stack: typeof error.stack === "string" ? error.stack : "",
      };
      if (typeof error.code === "string") info.code = error.code;
      if (typeof error.runId === "string") info.runId = error.runId;
      const limit = apply(weakGet, limitErrors, [error]);
      if (limit !== undefined) info.limit = limit;
      return stringify(info);
    }
    return stringify({ name: "Error", message: "uncaught " + inspect(error), stack: "" });
  } catch {
    return stringify({ name: "Error", message: "uncaught error that could not be read", stack: "" });
  }
}

// QuickJS throws null when it cannot even allocate its out-of-memory error. The script's
// outermost frame hands each uncaught value here while what it holds is still alive: a null that
// arrives when not even a few KiB more fit is the memory limit, not the script's own throw null.
const MemoryProbe = ArrayBuffer;
function uncaught(error) {
  if (error === null) {
    try {
      new MemoryProbe(4096);
    } catch {
      host("out_of_memory");
    }
  }
  return error;
}

// The wrapper line calls this once with a class whose static method "<anonymous>" is the script
// (the name its frame always had in stacks); its private method, which the catches of the script
// and of its functions call, reaches uncaught() through the class's prototype (super), so no
// name of it is in the script's scope (vm-session.ts wrapScript, frame-guard.ts).
const setPrototypeOf = Object.setPrototypeOf;
const freeze = Object.freeze;
const wrapperBase = freeze({ __proto__: null, uncaught });
define("__flow_start", function (wrapper) {
  delete g.__flow_start;
  let promise;
  try {
    setPrototypeOf(wrapper, wrapperBase);
    // eval of a built string can still name the class: frozen, nobody rewires what it calls.
    freeze(wrapper);
    promise = apply(wrapper["<anonymous>"], undefined, []);
  } catch (error) {
    promise = Promise.reject(error);
  }
  promise.then(
    (value) => {
      let text;
      try {
        text = value === undefined ? undefined : toJson(value, "the workflow's return value");
      } catch (error) {
        return host("finish", "error", errorInfo(error));
      }
      host("finish", "value", text);
    },
    (error) => host("finish", "error", errorInfo(error)),
  );
});

// The run-specific step. Everything above is the same for every run, so a worker evaluates it
// ahead of time, while it waits for its next run; when the run arrives, the worker calls this once,
// before the script's first line. Only the worker holds it: it is handed over through the host
// function, which the script never sees.
let configured = false;
host("prepared", function configure() {
  if (configured) throw new TypeError("the workflow VM is already configured");
  configured = true;
  config = call("config");
  now = config.startedAt;
  [sa, sb, sc, sd] = config.seedState;
  for (let i = 0; i < 12; i++) random();
  define("args", deepFreeze(parse(config.argsText)));
  const toolTable = Object.create(null);
  for (const name of config.toolNames) {
    toolTable[name] = { [name]: (input) => request("tool", name, input === undefined ? {} : input, "tools." + name + "() arguments") }[name];
  }
  const available = config.toolNames.length > 0 ? config.toolNames.join(", ") : "none";
  define("tools", new Proxy(Object.freeze(toolTable), {
    get(target, key) {
      if (typeof key !== "string" || key in target || key === "then" || key === "toJSON") return target[key];
      throw new TypeError("tools." + key + " is not available in this workflow (available: " + available + "); name the tools it calls in meta.tools");
    },
  }));
});
`;

/** The prelude bindings a lazy chunk receives, in the order lazy() passes them. */
const CHUNK_PARAMETERS = "FlowError, stringify, parse, request";

/**
 * The source without indentation, blank lines or whole-line comments: the prelude is compiled in
 * every run. Safe because no prelude or helper source has a template literal or a multi-line string.
 */
function compact(source: string): string {
  // Trimming lines would change a template literal's text: refuse one rather than alter it.
  if (source.includes("`")) throw new Error("The workflow prelude may not contain template literals: compact() trims lines.");
  return source
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("//"))
    .join("\n");
}

/** One lazily compiled chunk: strict source of a function that returns the named definitions. */
function chunk(names: readonly string[], source: string): string {
  return `"use strict";(function (${CHUNK_PARAMETERS}) {\n${compact(source)}\nreturn { ${names.join(", ")} };\n})`;
}

export interface Prelude {
  /** Evaluated in every run's VM before the script. */
  source: string;
  /** Sources of the lazily compiled globals, by index: the VM asks for one on first use. */
  chunks: string[];
}

/**
 * The prelude: one IIFE holding the private bindings (FlowError, stringify, parse, request). The
 * helpers and discovery are registered as lazy chunks: compiled inside the VM on first use.
 */
export function buildPrelude(): Prelude {
  const lazyGlobals: Array<[names: string[], source: string]> = [
    [["describeTool", "searchTools"], DISCOVERY],
    ...HELPERS.map((helper): [string[], string] => [[helper.name], helper.source]),
  ];
  const registrations = lazyGlobals.map(([names], index) => `lazy(${JSON.stringify(names)}, "${index}");`);
  return {
    source: `(function (g) {\n"use strict";\n${compact(CORE)}\n${registrations.join("\n")}\n})(globalThis);\n`,
    chunks: lazyGlobals.map(([names, source]) => chunk(names, source)),
  };
}
