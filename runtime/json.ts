// JSON is the only thing that crosses the host boundary. Parsing drops `__proto__` keys so a value
// a script returns cannot change the prototype of an object a host later copies it into.
import type { JsonValue } from "./types.ts";

function dropProto(key: string, value: unknown): unknown {
  return key === "__proto__" ? undefined : value;
}

export function parseJson(text: string): JsonValue {
  return JSON.parse(text, dropProto) as JsonValue;
}

/** A JSON copy of `value`; throws TypeError when it cannot be represented as JSON. */
export function toJsonText(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(`${what} must be JSON-serializable: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (text === undefined) throw new TypeError(`${what} must be JSON-serializable`);
  return text;
}
