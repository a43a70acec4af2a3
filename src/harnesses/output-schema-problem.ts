import { TOO_DEEP } from "../../runtime/schema-check.ts";
import { SCHEMA_WORK_LIMIT_MS, SCHEMA_WORK_MEMORY_MB } from "./schema-limits.ts";
import { schemaProblemInWorker, type WorkerJobOptions } from "./schema-worker.ts";

const REFUSED = "outputSchema is not a usable JSON Schema";

/**
 * Why an outputSchema cannot be used, or undefined when it can: the same check before a child is
 * paid for (prepare-child.ts) and in `flow check` for a literal outputSchema (literal-calls.ts).
 * Each step (size, compile, meta-schema, self-reference) takes time in proportion to the schema,
 * which a model writes: a `required` of 200,000 names held Pi's thread for half a second. So it
 * runs in the schema worker, under its limits; Pi's thread only copies the schema there.
 */
export async function outputSchemaProblem(schema: unknown, options: WorkerJobOptions = {}): Promise<string | undefined> {
  const checked = await schemaProblemInWorker(schema, options);
  switch (checked.kind) {
    case "checked":
      return checked.problem === undefined ? undefined : `${REFUSED}: ${checked.problem}`;
    case "cancelled":
      return `${REFUSED}: its check was cancelled with the call`;
    case "too_slow":
      return `${REFUSED}: checking it took longer than ${SCHEMA_WORK_LIMIT_MS / 1000} s, so it was stopped`;
    case "out_of_memory":
      return `${REFUSED}: checking it ran out of the checking worker's ${SCHEMA_WORK_MEMORY_MB} MB of memory, so it was stopped`;
    case "error":
      // Too deep for the copy to the worker is far past MAX_SCHEMA_DEPTH: said as the worker says it.
      return `${REFUSED}: ${checked.unsent === "too_deep" ? TOO_DEEP : checked.message}`;
  }
}
