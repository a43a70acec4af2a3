// VM source of the prelude's JSON boundary (prelude.ts interpolates it into its core): how a
// value the script hands the host is measured, serialised and shown. It runs with the prelude's
// private bindings (stringify, keysOf, apply, weakSet, limitErrors, config).

/** checkDepth(), toJson() and inspect(), as the prelude's core defines them. */
export const JSON_BOUNDARY = String.raw`// QuickJS's JSON.stringify checks for cycles once per level against every level above it, so a
// value nested 20,000 deep costs seconds before it overflows. Measured first, depth-first with an
// explicit stack, a value past valueDepth fails at once with the limit's error, and a cycle with
// the TypeError stringify would give.
const EXIT = {};
function checkDepth(value, what) {
  if (value === null || typeof value !== "object") return;
  const path = new Set();
  const stack = [value, 1];
  while (stack.length > 0) {
    const depth = stack.pop();
    const item = stack.pop();
    if (item === EXIT) {
      path.delete(depth);
      continue;
    }
    if (path.has(item)) throw new TypeError(what + " must be JSON-serializable: circular reference");
    if (depth > config.valueDepth) {
      const error = new RangeError("value depth limit (" + config.valueDepth + ") reached: " + what + " nests deeper than " + config.valueDepth + " levels");
      error.code = "valueDepth";
      apply(weakSet, limitErrors, [error, "valueDepth"]);
      throw error;
    }
    path.add(item);
    stack.push(EXIT, item);
    for (const key of keysOf(item)) {
      const child = item[key];
      if (child !== null && typeof child === "object") stack.push(child, depth + 1);
    }
  }
}

function toJson(value, what) {
  checkDepth(value, what);
  let text;
  try {
    text = stringify(value);
  } catch (error) {
    // Cycles and BigInts are the script's mistake; anything else (out of memory) passes through.
    if (!(error instanceof TypeError)) throw error;
    throw new TypeError(what + " must be JSON-serializable: " + error.message);
  }
  if (text === undefined) throw new TypeError(what + " must be JSON-serializable");
  return text;
}

function inspect(value) {
  if (typeof value === "string") return value;
  if (value === undefined) return "undefined";
  if (typeof value === "function") return "[Function " + (value.name || "anonymous") + "]";
  if (typeof value === "bigint") return value + "n";
  if (typeof value === "symbol") return value.toString();
  if (value instanceof Error) return value.name + ": " + value.message;
  try {
    const text = stringify(value);
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}`;
