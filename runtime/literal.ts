// Reads an acorn expression as a literal JSON value without evaluating anything: objects with
// plain keys, arrays without holes or spreads, strings, finite numbers, booleans and null.
import type { Expression, Node } from "acorn";
import { capText } from "./text.ts";
import type { JsonValue } from "./types.ts";

/** The most of a key a refusal quotes: a key may be a megabyte long. */
const MAX_KEY_CHARS = 100;

export class NotLiteralError extends Error {
  readonly node: Node;
  constructor(message: string, node: Node) {
    super(message);
    this.node = node;
  }
}

/**
 * `duplicateKeys`: "refuse" (meta: a second `tools` below the first would grant unseen) or "last",
 * as JavaScript evaluates the object (a literal agent() option, checked as the run will see it).
 */
export function readLiteral(node: Expression, duplicateKeys: "refuse" | "last" = "refuse"): JsonValue {
  switch (node.type) {
    case "Literal": {
      const value = node.value;
      if (value === null || typeof value === "string" || typeof value === "boolean") return value;
      if (typeof value === "number" && Number.isFinite(value)) return value;
      throw new NotLiteralError("only JSON literals are allowed (no regular expressions or BigInts)", node);
    }
    case "UnaryExpression": {
      // A negative number is an operator in the AST but a literal in JSON.
      if (node.operator === "-" && node.argument.type === "Literal" && typeof node.argument.value === "number") {
        return -node.argument.value;
      }
      throw new NotLiteralError("only JSON literals are allowed", node);
    }
    case "TemplateLiteral": {
      const quasi = node.quasis[0];
      if (node.expressions.length === 0 && quasi && quasi.value.cooked != null) return quasi.value.cooked;
      throw new NotLiteralError("template literals with substitutions are not literal", node);
    }
    case "ArrayExpression":
      return node.elements.map((element) => {
        if (element === null) throw new NotLiteralError("arrays must not have holes", node);
        if (element.type === "SpreadElement") throw new NotLiteralError("spread is not literal", element);
        return readLiteral(element, duplicateKeys);
      });
    case "ObjectExpression": {
      const out: Record<string, JsonValue> = {};
      for (const property of node.properties) {
        if (property.type === "SpreadElement") throw new NotLiteralError("spread is not literal", property);
        if (property.computed || property.kind !== "init" || property.method || property.shorthand) {
          throw new NotLiteralError("object properties must be plain `key: value` pairs", property);
        }
        const key = property.key.type === "Identifier"
          ? property.key.name
          : property.key.type === "Literal" && typeof property.key.value === "string" ? property.key.value : undefined;
        if (key === undefined) throw new NotLiteralError("object keys must be names or strings", property.key);
        if (key === "__proto__") throw new NotLiteralError("__proto__ is not allowed as a key", property.key);
        // JavaScript keeps the last silently: a second `tools` far below the first grants what a reader of the first does not see.
        if (duplicateKeys === "refuse" && Object.hasOwn(out, key)) throw new NotLiteralError(`writes the key ${JSON.stringify(capText(key, MAX_KEY_CHARS))} twice: JavaScript would keep only the last; write it once`, property.key);
        out[key] = readLiteral(property.value as Expression, duplicateKeys);
      }
      return out;
    }
    default:
      throw new NotLiteralError(`must be a literal JSON value, not ${describe(node.type)}`, node);
  }
}

function describe(type: string): string {
  return type.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}
