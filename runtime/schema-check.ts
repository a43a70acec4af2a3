// Checks that a workflow's `meta.args` is a JSON Schema an author meant: valid against the JSON
// Schema meta-schema (draft-07, which Pi's own tool schemas follow), so `type: "objekt"` or
// `required: "a"` is the script's error at parse time, not the caller's at launch.
import { createRequire } from "node:module";

interface AjvInstance {
  validateSchema(schema: unknown): boolean | Promise<unknown>;
  errors?: Array<{ instancePath: string; message?: string }> | null;
}

let ajv: AjvInstance | undefined;

/** Ajv is loaded on the first schema a workflow declares: most runs never need it. */
function validator(): AjvInstance {
  if (!ajv) {
    const Ajv = createRequire(import.meta.url)("ajv") as { default: new (options: object) => AjvInstance };
    ajv = new Ajv.default({ allErrors: false, strict: false, validateSchema: true });
  }
  return ajv;
}

/** Why `schema` is not a usable JSON Schema, or undefined when it is. */
export function jsonSchemaProblem(schema: unknown): string | undefined {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return "the schema must be an object";
  // Checked against draft-07 whatever `$schema` names: the keywords workflows use are the same.
  const { $schema: _dialect, ...body } = schema as Record<string, unknown>;
  const check = validator();
  try {
    if (check.validateSchema(body) === true) return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  const first = check.errors?.[0];
  if (!first) return "not a JSON Schema";
  const where = first.instancePath === "" ? "the schema" : first.instancePath.slice(1).replaceAll("/", ".");
  return `${where} ${first.message ?? "is invalid"}`;
}
