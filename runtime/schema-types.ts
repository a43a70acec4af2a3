// JSON Schema -> TypeScript with json-schema-to-typescript, for the declarations workflow authors
// and scripts read (flow.d.ts, `flow types`, describeTool()). The compiler (with prettier) is large:
// it is loaded when a declaration is first needed, never when the runtime is imported.
import type { JSONSchema } from "json-schema-to-typescript";
import { capText } from "./text.ts";
import type { ToolSchema } from "./types.ts";

let compiler: Promise<typeof import("json-schema-to-typescript")> | undefined;

export interface TypeOptions {
  /** An object schema that does not say `additionalProperties` gets no index signature. */
  closed?: boolean;
  /** Union branches name each other's keys as absent (see normalizeUnions). */
  normalize?: boolean;
  /** pi-flow's own schema, whose `tsType`s are kept (helpers' function types); anyone else's are dropped. */
  own?: boolean;
}

/**
 * The declaration of `name` (an interface or type alias), without `export`: the declarations are
 * global. Closed types make a misspelt key or property an error in the author's editor (tool
 * inputs and results, workflow args, agent() options); open ones keep an index signature.
 */
export async function schemaToType(schema: unknown, name: string, options: TypeOptions = {}): Promise<string> {
  const { compile } = await (compiler ??= import("json-schema-to-typescript"));
  const stripped = stripTitles(schema, options.own === true);
  const prepared = options.normalize ? normalizeUnions(stripped) : stripped;
  const source = await compile(prepared as JSONSchema, name, {
    bannerComment: "",
    format: true,
    additionalProperties: !options.closed,
    strictIndexSignatures: false,
    unknownAny: true,
    // Data positions (a const that holds a $ref) are not walked below: the resolver leaves any it meets there alone.
    $refOptions: { resolve: { external: false } },
    style: { printWidth: 120, semi: true, singleQuote: false, trailingComma: "all" },
  });
  return source.replace(/^export /gm, "").trim();
}

/** Keywords that say what a value is; a schema with none of them (`{}`, a description) allows any value. */
const SHAPE_KEYWORDS = ["type", "properties", "items", "anyOf", "oneOf", "allOf", "enum", "const", "$ref", "tsType", "additionalProperties", "patternProperties", "not"];
/** Keywords whose value is a map of names to schemas, and those whose value is a schema or a list of them. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "definitions", "$defs"]);
const SUBSCHEMAS = new Set(["items", "additionalProperties", "not", "contains", "if", "then", "else", "anyOf", "oneOf", "allOf"]);

/**
 * Walks schema positions only (never `const`, `enum` or `default` values): titles and `$id`s are
 * dropped, as they would rename the generated interfaces and the caller's name is the contract
 * (`WorkflowInput<"review">` reads ReviewWorkflowArgs); a schema that allows any value becomes
 * `unknown`, whatever the compiler's default for it. So does a `$ref` the compiler's resolver
 * should not follow: one out of the schema (a URL, a file), which it would fetch or read on the
 * host, and an `$anchor` ("#A"), which it cannot. A `tsType` (the compiler's escape hatch, written
 * into the declarations as it is) is kept only in pi-flow's own schemas: an extension, an MCP
 * server or a saved workflow writes the others.
 */
function stripTitles(schema: unknown, own: boolean): unknown {
  return mapSubschemas(
    schema,
    (sub) => stripTitles(sub, own),
    (node) => {
      delete node.title;
      delete node.$id;
      if (!own) delete node.tsType;
      if (typeof node.$ref === "string" && node.$ref !== "#" && !node.$ref.startsWith("#/")) {
        const { $ref: _unfollowed, ...rest } = node;
        return { ...rest, tsType: "unknown" };
      }
      return SHAPE_KEYWORDS.some((key) => key in node) ? node : { ...node, tsType: "unknown" };
    },
  );
}

type SchemaNode = { [key: string]: unknown };
const isNode = (value: unknown): value is SchemaNode => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * A copy of a schema node with `walk` applied to its subschemas only: the members of SCHEMA_MAPS
 * and the SUBSCHEMAS, never the values of `const`, `enum`, `default` or `examples`, which are data
 * and may look like schemas. `finish` then sees the copied node.
 */
function mapSubschemas(schema: unknown, walk: (sub: unknown) => unknown, finish: (node: SchemaNode) => unknown): unknown {
  if (Array.isArray(schema)) return schema.map(walk);
  if (!isNode(schema)) return schema;
  const node: SchemaNode = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_MAPS.has(key) && isNode(value)) node[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, walk(sub)]));
    else node[key] = SUBSCHEMAS.has(key) ? walk(value) : value;
  }
  return finish(node);
}

/**
 * In a union of object schemas (anyOf/oneOf), each branch also names the other branches'
 * properties as absent (`false`, rendered `?: never`), as TypeScript does for a union of object
 * literals: `page.data.mode` is then readable on every branch and narrows the union, instead of
 * being an error on the branches that lack it.
 */
function normalizeUnions(schema: unknown): unknown {
  return mapSubschemas(schema, normalizeUnions, namesAbsentKeys);
}

function namesAbsentKeys(node: SchemaNode): SchemaNode {
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = node[keyword];
    if (!Array.isArray(branches) || !branches.every((branch) => isNode(branch) && isNode(branch.properties))) continue;
    const keys = new Set(branches.flatMap((branch) => Object.keys((branch as { properties: SchemaNode }).properties)));
    node[keyword] = branches.map((branch: SchemaNode) => {
      const properties = { ...(branch.properties as SchemaNode) };
      for (const key of keys) if (!(key in properties)) properties[key] = false;
      return { ...branch, properties };
    });
  }
  return node;
}

/**
 * The declaration of `name`, or, when the compiler cannot render the schema (a $ref to nothing,
 * which Pi's validator allows in an MCP server's tool; a boolean schema at the root), `fallback`
 * with a comment saying why: one tool's schema failed a script's searchTools() for every tool,
 * and `flow types` for the whole project.
 */
export async function schemaToTypeOr(schema: unknown, name: string, fallback: "record" | "unknown", options: TypeOptions = {}): Promise<string> {
  try {
    return await schemaToType(schema, name, options);
  } catch (error) {
    const why = capText(error instanceof Error ? error.message : String(error), 200).replace(/\s+/g, " ");
    const type = fallback === "record" ? "{ [key: string]: unknown }" : "unknown";
    return `${docComment(`Not typed: its JSON Schema could not be rendered (${why}).`)}type ${name} = ${type};`;
  }
}

/** `external_runs` -> `ExternalRuns`, `my-tool.v2` -> `MyToolV2`. */
export function pascal(name: string): string {
  return name.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_match, _sep: string, char: string) => char.toUpperCase());
}

export function docComment(text: string, indent = ""): string {
  return `${indent}/** ${text.replace(/\*\//g, "*\\/")} */\n`;
}

/** An object key as TypeScript needs it written: bare when it is an identifier, quoted otherwise. */
export const propertyKey = (name: string): string => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name));

export interface ToolDeclaration {
  /** The input and output types. */
  types: string[];
  /** The `tools.<name>(args)` member, with its description's first line as a comment. */
  member: string;
}

/** One tool's types from its input and output schemas; Pi resolves a tool without an output schema to its text. */
export async function toolDeclaration(name: string, schema: ToolSchema): Promise<ToolDeclaration> {
  const base = pascal(name);
  const types = [await schemaToTypeOr(schema.input, `${base}Input`, "record", { closed: true, normalize: true })];
  const output = schema.output === undefined ? "string" : `${base}Output`;
  if (schema.output !== undefined) types.push(await schemaToTypeOr(schema.output, output, "unknown", { closed: true, normalize: true }));
  const summary = schema.description?.split("\n")[0]?.trim();
  const member = `${summary ? docComment(summary, "  ") : ""}  ${propertyKey(name)}(args: ${base}Input): Promise<${output}>;`;
  return { types, member };
}

/**
 * What describeTool(name) answers inside a script, in the shape Pi's codemode uses: the tool's
 * description, then its declaration as a TypeScript block.
 */
export async function describeToolText(name: string, schema: ToolSchema): Promise<string> {
  const { types, member } = await toolDeclaration(name, schema);
  const declaration = `${types.join("\n\n")}\n\ndeclare const tools: {\n${member}\n};`;
  return `${schema.description?.trim() ?? ""}\n\nworkflow tool declaration:\n\`\`\`ts\n${declaration}\n\`\`\``;
}
