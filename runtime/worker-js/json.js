// Generated from runtime/json.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// JSON is the only thing that crosses the host boundary, and nothing that crosses it may recurse
// without a bound: V8's JSON.parse with a reviver, and JSON.stringify, recurse once per level and
// throw RangeError past the native stack. Values are therefore measured first (a linear scan, no
// recursion), refused past the valueDepth limit, parsed without a reviver, and stripped of
// `__proto__` keys iteratively, so a value a script returns can never change the prototype of an
// object a host later copies it into.
                                            

/** A value that cannot cross the boundary: too deeply nested, or not JSON at all. */
export class JsonBoundaryError extends Error {
  /** "valueDepth" when the value is nested past the limit, "json" when the text is not JSON. */
           reason                       ;
           depth                    ;
  constructor(reason                       , message        , depth         ) {
    super(message);
    this.name = "JsonBoundaryError";
    this.reason = reason;
    this.depth = depth;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * The deepest nesting of arrays and objects in JSON text, found in one pass without recursion.
 * Stops counting once it passes `stopAbove` (the answer is then just "more than that").
 */
export function jsonDepth(text        , stopAbove = Number.POSITIVE_INFINITY)         {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return deepest;
}

/**
 * Parses JSON text that came across the boundary. Throws JsonBoundaryError (never RangeError) when
 * the value nests deeper than `maxDepth` or the text is not JSON.
 */
export function decodeJson(text        , maxDepth        )            {
  const depth = jsonDepth(text, maxDepth);
  if (depth > maxDepth) {
    throw new JsonBoundaryError("valueDepth", `the value nests deeper than ${maxDepth} levels`, depth);
  }
  let value           ;
  try {
    value = JSON.parse(text)             ;
  } catch (error) {
    throw new JsonBoundaryError("json", `the value is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  // `__proto__` can only appear as a key spelled out or escaped; skip the walk when neither can.
  if (text.includes("__proto__") || text.includes("\\u")) dropProtoKeys(value);
  return value;
}

/** Deletes every own `__proto__` key, walking with an explicit stack. */
function dropProtoKeys(root           )       {
  const stack              = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== "object") continue;
    if (Array.isArray(value)) {
      for (const item of value) if (item !== null && typeof item === "object") stack.push(item);
      continue;
    }
    if (Object.hasOwn(value, "__proto__")) delete value["__proto__"];
    for (const key of Object.keys(value)) {
      const item = value[key];
      if (item !== null && typeof item === "object" && item !== undefined) stack.push(item);
    }
  }
}

/** A JSON copy of `value`; throws TypeError when it cannot be represented as JSON. */
export function toJsonText(value         , what        )         {
  let text                    ;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(`${what} must be JSON-serializable: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (text === undefined) throw new TypeError(`${what} must be JSON-serializable`);
  return text;
}
