// VM source of the prelude's JSON boundary (prelude.ts interpolates it into its core): how a
// value the script hands the host is measured, serialised and shown. It runs with the prelude's
// private bindings (stringify, apply, weakGet, weakSet, limitErrors, config).

/** toJson() and inspect(), as the prelude's core defines them. */
export const JSON_BOUNDARY = String.raw`// QuickJS's JSON.stringify checks for cycles once per level against every level above it, so a
// value nested 20,000 deep costs seconds before it overflows. Its depth is measured as stringify
// reaches each value: after toJSON, and reading each getter once, so the value measured is the
// value sent (a walk of its own before stringify saw another: a toJSON or getter could hand
// stringify 200,000 levels and spend the run's CPU). A value past valueDepth fails at once with
// the limit's error; a cycle with the TypeError stringify gives.
const depths = new WeakMap();
function depthError(what) {
  const error = new NativeRangeError("value depth limit (" + config.valueDepth + ") reached: " + what + " nests deeper than " + config.valueDepth + " levels");
  error.code = "valueDepth";
  apply(weakSet, limitErrors, [error, "valueDepth"]);
  return error;
}
// The holder stringify passes as this: the root's is a fresh wrapper (depth 0), every other was met first.
function measuring(what) {
  return function (key, value) {
    if (value !== null && typeof value === "object") {
      const depth = (apply(weakGet, depths, [this]) ?? 0) + 1;
      if (depth > config.valueDepth) throw depthError(what);
      apply(weakSet, depths, [value, depth]);
    }
    return value;
  };
}

function toJson(value, what) {
  let text;
  try {
    text = stringify(value, measuring(what));
  } catch (error) {
    // Cycles and BigInts are the script's mistake; anything else (out of memory, the depth limit) passes through.
    if (!(error instanceof NativeTypeError)) throw error;
    throw new NativeTypeError(what + " must be JSON-serializable: " + error.message);
  }
  if (text === undefined) throw new NativeTypeError(what + " must be JSON-serializable");
  return text;
}

// Printing never throws: a revoked proxy, or a getter, toJSON or Symbol.toPrimitive of the script's
// that throws, prints as a placeholder instead of failing the console.log() or text() call.
function inspect(value) {
  try {
    return shown(value);
  } catch {
    return "[a value that cannot be printed]";
  }
}

function shown(value) {
  if (typeof value === "string") return value;
  if (value === undefined) return "undefined";
  if (typeof value === "function") return "[Function " + (value.name || "anonymous") + "]";
  if (typeof value === "bigint") return value + "n";
  if (typeof value === "symbol") return toText(value);
  if (value instanceof Error) return value.name + ": " + value.message;
  try {
    const text = stringify(value, measuring("the printed value"));
    return text === undefined ? toText(value) : text;
  } catch (error) {
    // Printed whole it would spend seconds of the run's CPU, and String() of it overflows the stack.
    if (apply(weakGet, limitErrors, [error]) === "valueDepth") return "[a value nested deeper than " + config.valueDepth + " levels]";
    return toText(value);
  }
}`;
