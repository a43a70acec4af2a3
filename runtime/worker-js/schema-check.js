// Generated from runtime/schema-check.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// Checks that a workflow's `meta.args` is a JSON Schema an author meant: valid against the JSON
// Schema meta-schema (draft-07, which Pi's own tool schemas follow), so `type: "objekt"` or
// `required: "a"` is the script's error at parse time, not the caller's at launch.
import { createRequire } from "node:module";
import { selfReferenceProblem } from "./schema-cycles.js";
import { capText } from "./text.js";

                       
                                                              
                                                                    
 

let ajv                         ;

/** Ajv is loaded on the first schema a workflow declares: most runs never need it. */
function validator()              {
  if (!ajv) {
    const Ajv = createRequire(import.meta.url)("ajv")                                                     ;
    ajv = new Ajv.default({ allErrors: false, strict: false, validateSchema: true });
  }
  return ajv;
}

/** An enum longer than this is checked for duplicates here, in linear time, before Ajv sees it. */
const AJV_ENUM_ITEMS = 16;

/** Keywords whose value maps names to schemas: a property named `const` or `enum` is a schema, not data. */
const NAME_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"]);

/**
 * `schema` as Ajv needs it to say the same, without its data: the meta-schema takes any `const`
 * and `default` and any array of `examples`, so they become null and []; 200,000 keys in a const,
 * copied and walked value by value, held Pi's main thread for 3 seconds. A long `enum` is cut to
 * AJV_ENUM_ITEMS: the meta-schema asks for `uniqueItems`, which Ajv checks by comparing every
 * pair, so an enum of 40,000 strings (a model's list of a repository's files) held Pi for 20
 * seconds. Duplicates are found here by their canonical JSON text instead (keys sorted, as JSON
 * Schema's equality ignores their order); an enum with one becomes that pair, which Ajv reports
 * at its path. Recursive: schemaSizeProblem has bounded the depth.
 */
function withoutData(node         , namesSchemas = false)          {
  if (node === null || typeof node !== "object") return node;
  if (Array.isArray(node)) return node.map((item) => withoutData(item));
  const copy                          = {};
  for (const [key, value] of Object.entries(node)) {
    const kept = namesSchemas || !DATA_KEYWORDS.has(key) ? withoutData(value, !namesSchemas && NAME_MAPS.has(key)) : dataForAjv(key, value);
    // Defined, not assigned: a key "__proto__" (JSON.parse makes it an own key) stays a key.
    Object.defineProperty(copy, key, { value: kept, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** What Ajv is given for a data keyword's value: what makes it say the same of it. */
function dataForAjv(key        , value         )          {
  if (!Array.isArray(value)) return key === "const" || key === "default" ? null : value;
  if (key === "examples") return [];
  if (key !== "enum" || value.length <= AJV_ENUM_ITEMS) return value;
  const seen = new Set        ();
  for (const item of value) {
    const text = canonicalText(item);
    if (seen.has(text)) return [item, item];
    seen.add(text);
  }
  return value.slice(0, AJV_ENUM_ITEMS);
}

/** `value`'s JSON text with every object's keys sorted: two values JSON Schema calls equal have the same. */
function canonicalText(value         )         {
  return JSON.stringify(value, (_key, inner         ) => {
    if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return inner;
    const sorted                          = {};
    for (const key of Object.keys(inner).sort()) Object.defineProperty(sorted, key, { value: (inner                           )[key], enumerable: true });
    return sorted;
  });
}

/** The deepest a schema may nest objects and arrays: compiling and checking one walk it recursively. */
export const MAX_SCHEMA_DEPTH = 256;

/**
 * The most objects and arrays a schema may hold outside enum, const, default and examples: it is
 * compiled and checked against the meta-schema on Pi's main thread, which took a second for
 * 100,000 properties and takes about a tenth of one for this many.
 */
export const MAX_SCHEMA_OBJECTS = 5_000;

/** Keywords whose value is data, not schemas: a long enum of objects is not many schemas. */
const DATA_KEYWORDS = new Set(["enum", "const", "default", "examples"]);

/** What schemaSizeProblem says of a schema past MAX_SCHEMA_DEPTH. */
export const TOO_DEEP = `it nests objects and arrays more than ${MAX_SCHEMA_DEPTH} levels deep, the most a schema may (MAX_SCHEMA_DEPTH)`;

/**
 * The objects and arrays schemaSizeProblem has visited on this thread: each thread that loads this
 * module has its own count, so the host's stays still while the schema worker checks an outputSchema.
 */
export const schemaSizeWalks = { nodes: 0 };

/**
 * Why `schema` is too deep or too large to compile, found without recursion and before anything
 * recursive reads it: 10,000 levels overflowed the stack ("Maximum call stack size exceeded"),
 * and 100,000 properties held Pi's main thread for a second. Or why it holds a number JSON cannot.
 */
export function schemaSizeProblem(schema         )                     {
  const stack                                                          = [{ value: schema, depth: 1, data: false }];
  let objects = 0;
  while (stack.length > 0) {
    const { value, depth, data } = stack.pop() ;
    if (value === null || typeof value !== "object") continue;
    schemaSizeWalks.nodes++;
    if (depth > MAX_SCHEMA_DEPTH) return TOO_DEEP;
    if (!data && ++objects > MAX_SCHEMA_OBJECTS) {
      return `it holds more than ${MAX_SCHEMA_OBJECTS} objects and arrays outside enum, const, default and examples, the most a schema may (MAX_SCHEMA_OBJECTS)`;
    }
    if (data || Array.isArray(value)) {
      // Values only: data is walked for its depth alone, and a const may hold 200,000 keys.
      for (const child of Object.values(value)) {
        if (child !== null && typeof child === "object") stack.push({ value: child, depth: depth + 1, data });
        else if (typeof child === "number" && !Number.isFinite(child)) return NOT_A_JSON_NUMBER;
      }
      continue;
    }
    for (const [key, child] of Object.entries(value)) {
      if (child !== null && typeof child === "object") stack.push({ value: child, depth: depth + 1, data: DATA_KEYWORDS.has(key) });
      else if (typeof child === "number" && !Number.isFinite(child)) return NOT_A_JSON_NUMBER;
    }
  }
  return typeof schema === "number" && !Number.isFinite(schema) ? NOT_A_JSON_NUMBER : undefined;
}

/**
 * A number past JSON's (1e400 reads as Infinity): no answer can equal it, and the run's records
 * keep it as null; a child with `const: 1e400` was paid for, then failed with "expected null".
 */
const NOT_A_JSON_NUMBER = "it holds a number JSON cannot write (such as 1e400, which reads as Infinity and is saved as null); write a finite one";

/** Why `schema` is not a usable JSON Schema, or undefined when it is. */
export function jsonSchemaProblem(schema         )                     {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return "the schema must be an object";
  const tooLarge = schemaSizeProblem(schema);
  if (tooLarge !== undefined) return tooLarge;
  // Checked against draft-07 whatever `$schema` names: the keywords workflows use are the same.
  const { $schema: _dialect, ...body } = withoutData(schema)                           ;
  const check = validator();
  try {
    if (check.validateSchema(body) === true) return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  const first = check.errors?.[0];
  if (!first) return "not a JSON Schema";
  const where = first.instancePath === "" ? "the schema" : first.instancePath.slice(1).replaceAll("/", ".");
  // A path through a 1 MB property name is quoted cut short.
  return `${capText(where, 200)} ${first.message ?? "is invalid"}`;
}

/** The longest quote of why a schema is refused: the compiler's message quotes a broken pattern or $ref whole. */
export const MAX_SCHEMA_PROBLEM_CHARS = 400;

/**
 * Why an outputSchema cannot be used, or undefined when it can: too deep or too large, one that
 * `compile` (the caller's compiler: runtime/ imports nothing from Pi) refuses, one the compiler
 * accepts silently though no answer could satisfy it (`type: "strng"`), checked against the
 * meta-schema as a workflow's meta.args is, or one that refers back to itself. Run in the schema
 * worker (src/harnesses/output-schema-problem.ts): each step takes time in proportion to the schema.
 */
export function schemaProblem(schema         , compile                              )                     {
  // Before the compiler, which recurses.
  const tooLarge = schemaSizeProblem(schema);
  if (tooLarge !== undefined) return tooLarge;
  try {
    compile(schema);
  } catch (error) {
    return capText(error instanceof Error ? error.message : String(error), MAX_SCHEMA_PROBLEM_CHARS);
  }
  const problem = jsonSchemaProblem(schema) ?? selfReferenceProblem(schema);
  return problem === undefined ? undefined : capText(problem, MAX_SCHEMA_PROBLEM_CHARS);
}
