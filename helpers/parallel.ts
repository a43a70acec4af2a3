// parallel(): run thunks with bounded concurrency, results in input order, first failure wins.
import type { HelperDefinition } from "./types.ts";

export const parallel: HelperDefinition = {
  name: "parallel",
  signature: "parallel<T>(thunks: ReadonlyArray<() => T | Promise<T>>, options?: ParallelOptions): Promise<T[]>",
  description:
    "Runs the thunks with at most `concurrency` (default: all) in flight and resolves to their results in input order. " +
    "On the first failure it starts no further thunks, waits for those in flight, then rejects with that error. " +
    "Pass thunks (`() => agent({...})`), not promises. The run's `concurrency` limit still caps agent() calls.",
  source: String.raw`async function parallel(thunks, options) {
  if (!Array.isArray(thunks)) throw new TypeError("parallel(thunks, options): thunks must be an array of functions");
  for (let i = 0; i < thunks.length; i++) {
    if (typeof thunks[i] !== "function") {
      throw new TypeError("parallel: thunks[" + i + "] is not a function; pass () => agent({...}), not agent({...})");
    }
  }
  const concurrency = options?.concurrency ?? Math.max(1, thunks.length);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError("parallel: concurrency must be a positive integer");
  const results = new Array(thunks.length);
  let next = 0;
  let failure;
  const lane = async () => {
    while (next < thunks.length && failure === undefined) {
      const index = next++;
      try {
        results[index] = await thunks[index]();
      } catch (error) {
        if (failure === undefined) failure = { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, thunks.length) }, lane));
  if (failure !== undefined) throw failure.error;
  return results;
}`,
};
