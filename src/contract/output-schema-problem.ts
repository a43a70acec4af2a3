import { compile, type JsonSchema } from "@earendil-works/pi-schema";
import { jsonSchemaProblem, schemaSizeProblem } from "../../runtime/schema-check.ts";
import { capText } from "../../runtime/text.ts";
import { selfReferenceProblem } from "./schema-cycles.ts";

/** The longest quote of why a schema is refused: the compiler's message quotes a broken pattern or $ref whole. */
export const MAX_SCHEMA_PROBLEM_CHARS = 400;

/**
 * Why an outputSchema cannot be used, or undefined when it can: one that does not compile, or one
 * the compiler accepts silently though no answer could satisfy it (`type: "strng"`), checked
 * against the meta-schema as a workflow's meta.args is. The same check before a child is paid for
 * (prepare-child.ts) and in `flow check` for a literal outputSchema (literal-calls.ts).
 */
export function outputSchemaProblem(schema: unknown): string | undefined {
  // Before the compiler, which recurses and takes time in proportion to the schema's size.
  const tooLarge = schemaSizeProblem(schema);
  if (tooLarge !== undefined) return `outputSchema is not a usable JSON Schema: ${tooLarge}`;
  try {
    compile(schema as JsonSchema);
  } catch (error) {
    return `outputSchema is not a usable JSON Schema: ${capText((error as Error).message, MAX_SCHEMA_PROBLEM_CHARS)}`;
  }
  const problem = jsonSchemaProblem(schema) ?? selfReferenceProblem(schema);
  return problem ? `outputSchema is not a usable JSON Schema: ${capText(problem, MAX_SCHEMA_PROBLEM_CHARS)}` : undefined;
}
