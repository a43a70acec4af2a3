import type { compile } from "@earendil-works/pi-schema";
import { capText } from "../../runtime/text.ts";

// A violation quotes the schema (a pattern) and the answer (a key): a 300 KB pattern or a 1 MB key,
// quoted whole, went into the run's error, its receipt and the model's context.
const MAX_POINTER_CHARS = 200;
const MAX_VIOLATION_CHARS = 300;

export interface SchemaViolation {
  /** JSON Pointer to the offending part: "" for the value itself, else "/a/0/b". */
  pointer: string;
  message: string;
}

/** The first way `value` breaks a compiled schema, for a message that names where; undefined when it fits. */
export function firstViolation(validator: ReturnType<typeof compile>, value: unknown): SchemaViolation | undefined {
  if (validator.check(value)) return undefined;
  return violationOf(validator.errors(value)[0]);
}

/** A validator's first error as a violation (also what a checking worker reports: src/harnesses/schema-worker.ts). */
export function violationOf(first: { path?: string; message?: string } | undefined): SchemaViolation {
  const path = first?.path ?? "";
  const pointer = path === "" || path.startsWith("/") ? path : `/${path}`;
  return { pointer: capText(pointer, MAX_POINTER_CHARS), message: capText(first?.message ?? "does not match the schema", MAX_VIOLATION_CHARS) };
}
