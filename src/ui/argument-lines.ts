/**
 * A workflow's `meta.args` as a person reads it in `/flow workflows`: one line per argument with
 * its name, type, whether it is required, and its description, instead of raw JSON Schema. A
 * schema this cannot read as an object of properties is shown as compact JSON, so nothing is hidden.
 */
import type { JsonValue } from "../../runtime/index.ts";
import { oneLine } from "./format.ts";

type Schema = { [key: string]: JsonValue };

function isSchema(value: JsonValue | undefined): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** "string", "integer 1–10", "one of "a", "b"", "array of string", "string or null". */
export function typeText(schema: Schema): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((value) => JSON.stringify(value)).join(", ")}`;
  if ("const" in schema) return `exactly ${JSON.stringify(schema.const)}`;
  const types = Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === "string" ? [schema.type] : [];
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (types.length === 0 && alternatives) return alternatives.filter(isSchema).map(typeText).join(" or ");
  return types
    .map((type) => {
      if (type === "array" && isSchema(schema.items)) return `array of ${typeText(schema.items)}`;
      if ((type === "integer" || type === "number") && (typeof schema.minimum === "number" || typeof schema.maximum === "number")) {
        return `${type} ${schema.minimum ?? "…"}–${schema.maximum ?? "…"}`;
      }
      return type;
    })
    .join(" or ") || "any";
}

/** The argument lines, indented under the workflow's own line. */
export function argumentLines(args: JsonValue | undefined): string[] {
  if (args === undefined) return [];
  if (isSchema(args) && args.type === "object" && args.properties === undefined) return ["  args: any object"];
  if (!isSchema(args) || !isSchema(args.properties)) return [`  args: ${JSON.stringify(args)}`];
  const required = new Set(Array.isArray(args.required) ? args.required.map(String) : []);
  const names = Object.keys(args.properties);
  if (names.length === 0) return ["  args: none"];
  return [
    "  args:",
    ...names.map((name) => {
      const property = args.properties as Schema;
      const schema = isSchema(property[name]) ? (property[name] as Schema) : {};
      const description = typeof schema.description === "string" ? `: ${oneLine(schema.description)}` : "";
      const defaulted = "default" in schema ? `, default ${JSON.stringify(schema.default)}` : "";
      return `    ${name} (${typeText(schema)}, ${required.has(name) ? "required" : "optional"}${defaulted})${description}`;
    }),
  ];
}
