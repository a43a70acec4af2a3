/** How long checking one answer, or generating one stub value, may run in the schema worker before it, and the child, fail. */
export const SCHEMA_WORK_LIMIT_MS = 3000;

/**
 * The most memory (V8's old generation) the schema worker may use: a job past it ends the worker, not Pi.
 * A 32 MiB answer (the most a CLI child's line may hold) copied into it fits with room to spare.
 */
export const SCHEMA_WORK_MEMORY_MB = 256;
