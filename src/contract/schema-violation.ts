import type { compile } from "@earendil-works/pi-schema";

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
  return { pointer: path === "" || path.startsWith("/") ? path : `/${path}`, message: first?.message ?? "does not match the schema" };
}
