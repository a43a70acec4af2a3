// VM source of the prelude's host calls (prelude.ts puts it first in its core): it takes the single
// host function and hides it, defines the bindings the rest of the prelude and the lazy chunks share
// (FlowError, stringify, parse, define), and turns the host's JSON answers into values or errors.

/** call(), hostError(), lazy() and the private bindings they use. */
export const HOST_CALLS = String.raw`
const host = g.__flow_host;
delete g.__flow_host;
const stringify = JSON.stringify;
const parse = JSON.parse;
const defineProperty = Object.defineProperty;
// Everything the prelude calls once the script runs is taken now: a script that replaces a global or
// a prototype's method (Promise.prototype.then, Map.prototype.get, TypeError) changes its own values,
// never how a reply reaches its call or how the run ends.
const apply = Reflect.apply;
const NativePromise = Promise;
const promiseThen = Promise.prototype.then;
const NativeTypeError = TypeError;
const NativeRangeError = RangeError;
const toText = String;
const rejected = (error) => new NativePromise((resolve, reject) => reject(error));
// then() of a promise the prelude made: with an own constructor of undefined, then() builds its
// result from the real Promise and reads nothing the script can replace (Promise.prototype.constructor, Symbol.species).
function settleWith(promise, onValue, onError) {
  defineProperty(promise, "constructor", { value: undefined });
  apply(promiseThen, promise, [onValue, onError]);
}
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
const weakGet = WeakMap.prototype.get;
const weakSet = WeakMap.prototype.set;

// The host's own fields only: a script that puts "limit" on Object.prototype must not make every
// host refusal a limit error.
const hasOwn = Object.hasOwn;
// site: the frames of the script's call, for an answer that arrives later, when no frame of the
// script is on the stack (without it, the run's error would name no line).
function hostError(reply, site) {
  const e = (key) => (hasOwn(reply, key) ? reply[key] : undefined);
  const error = e("name") === "TypeError" ? new NativeTypeError(e("message"))
    : e("name") === "RangeError" ? new NativeRangeError(e("message"))
    : new FlowError(e("message"));
  if (site !== undefined) defineProperty(error, "stack", { value: site, writable: true, configurable: true, enumerable: false });
  // Defined, not assigned: a setter the script put on Object.prototype must not swallow the code.
  if (e("code") !== undefined) defineProperty(error, "code", { value: e("code"), writable: true, configurable: true, enumerable: true });
  if (e("runId") !== undefined) defineProperty(error, "runId", { value: e("runId"), writable: true, configurable: true, enumerable: true });
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
  if (hasOwn(reply.error, "ends") && reply.error.ends === true) host("ended_at", error.stack);
  throw error;
}
`;
