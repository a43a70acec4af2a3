// retry(): call fn again after a failure, up to `attempts` times. No delay: scripts have no timers.
import type { HelperDefinition } from "./types.ts";

export const retry: HelperDefinition = {
  name: "retry",
  signature: "retry<T>(fn: (attempt: number) => T | Promise<T>, options?: RetryOptions): Promise<T>",
  description:
    "Calls fn(attempt) (attempt is 1-based) until it resolves, at most `attempts` times (default 3, at most 100), " +
    "and rejects with the last error. `retryIf(error, attempt)` returning false stops early. Fatal errors (call limit, " +
    "unknown role) end the run and are never retried.",
  source: String.raw`async function retry(fn, options) {
  if (typeof fn !== "function") throw new TypeError("retry(fn, options): fn must be a function");
  const attempts = options?.attempts ?? 3;
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > 100) {
    throw new RangeError("retry: attempts must be an integer from 1 to 100");
  }
  const retryIf = options?.retryIf;
  if (retryIf !== undefined && typeof retryIf !== "function") throw new TypeError("retry: retryIf must be a function");
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      if (attempt >= attempts) throw error;
      if (retryIf !== undefined && !(await retryIf(error, attempt))) throw error;
    }
  }
}`,
};
