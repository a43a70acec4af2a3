import { validateToolArguments, type Tool } from "@earendil-works/pi-ai";
import type { TSchema } from "@sinclair/typebox";

/**
 * Validates a value with Pi's own validator (the one that guards tool arguments), so a test
 * agrees with what Pi will accept. Returns the error message, or null when the value matches.
 */
export function schemaViolation(schema: TSchema, value: unknown): string | null {
  const tool = { name: "schema_check", description: "", parameters: schema } as unknown as Tool;
  try {
    validateToolArguments(tool, { type: "toolCall", id: "check", name: "schema_check", arguments: value as Record<string, never> });
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
