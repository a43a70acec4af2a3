import { Worker } from "node:worker_threads";
import type { SchemaViolation } from "../contract/schema-violation.ts";

/**
 * An outputSchema's `pattern` is written by a model that reads untrusted content, and a pattern
 * such as ^(a+)+$ backtracks for minutes or forever on a 40-character string. Checked on the
 * host's main thread, that would freeze the user's Pi; so an answer whose schema holds a pattern
 * is checked in a worker that is terminated past PATTERN_CHECK_LIMIT_MS (docs/contract.md).
 */

/** How long checking one answer may run in its worker before the check, and the child, fail. */
export const PATTERN_CHECK_LIMIT_MS = 3000;

/** Whether `schema` holds a `pattern` or `patternProperties` anywhere; checked without recursion. */
export function schemaHoldsPattern(schema: unknown): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === null || typeof next !== "object") continue;
    if (!Array.isArray(next) && ("pattern" in next || "patternProperties" in next)) return true;
    for (const child of Object.values(next)) if (child !== null && typeof child === "object") stack.push(child);
  }
  return false;
}

export type PatternCheck =
  | { kind: "checked"; violation: SchemaViolation | undefined }
  | { kind: "too_slow"; pattern: string | undefined }
  | { kind: "error"; message: string };

type WorkerMessage =
  | { type: "started" }
  | { type: "pattern"; source: string }
  | { type: "checked"; violation: SchemaViolation | undefined }
  | { type: "error"; message: string };

/** Checks `value` against `schema` in a worker; the host's event loop keeps turning meanwhile. */
export function checkInWorker(value: unknown, schema: Record<string, unknown>, limitMs = PATTERN_CHECK_LIMIT_MS): Promise<PatternCheck> {
  return new Promise((resolve) => {
    const worker = new Worker(new URL("./pattern-check-worker.js", import.meta.url), { workerData: { value, schema } });
    let pattern: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (result: PatternCheck) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(result);
    };
    worker.on("message", (message: WorkerMessage) => {
      // The limit counts from when the check starts, not while a busy host loads the worker.
      if (message.type === "started") timer = setTimeout(() => finish({ kind: "too_slow", pattern }), limitMs);
      else if (message.type === "pattern") pattern = message.source;
      else if (message.type === "checked") finish({ kind: "checked", violation: message.violation });
      else finish({ kind: "error", message: message.message });
    });
    worker.on("error", (error) => finish({ kind: "error", message: error.message }));
    worker.on("exit", (code) => finish({ kind: "error", message: `the checking worker exited (code ${code}) before it answered` }));
  });
}
