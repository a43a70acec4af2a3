// Generated from runtime/limits.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// Limits fail closed: every limit has a default and a hard ceiling, and a request above the
// ceiling is refused (not clamped) so an author learns at once that the run cannot have it.
import { capText } from "./text.js";
                                                            

/** The most of an unknown limit's name a refusal quotes: a script may write one a megabyte long. */
const MAX_QUOTE_CHARS = 100;

const KiB = 1024;
const MiB = 1024 * KiB;

export const DEFAULT_LIMITS                           = Object.freeze({
  timeoutMs: 30 * 60_000,
  memoryBytes: 64 * MiB,
  stackBytes: 512 * KiB,
  agentCalls: 32,
  concurrency: 4,
  toolCalls: 256,
  callArgsChars: 1 * MiB,
  replyChars: 4 * MiB,
  outputChars: 64 * KiB,
  storeValueChars: 256 * KiB,
  storeTotalChars: 1 * MiB,
  storeWrites: 1000,
  storeWriteChars: 16 * MiB,
  resultChars: 4 * MiB,
  valueDepth: 100,
  hostBytes: 64 * MiB,
  cpuMs: 10_000,
});

export const LIMIT_CEILINGS                           = Object.freeze({
  timeoutMs: 24 * 60 * 60_000,
  memoryBytes: 512 * MiB,
  // The VM's stack lives in the worker's native stack; 4 MiB stays well inside what a worker
  // gets (WORKER_STACK_MB in pool.ts), so recursion always ends in a catchable QuickJS error.
  stackBytes: 4 * MiB,
  // A 1,000-child fan-out fits; what the calls hold on the host at once is bounded by hostBytes.
  agentCalls: 4096,
  concurrency: 32,
  toolCalls: 4096,
  // Each call's JSON is copied out of the VM into the host, so this bounds host memory per call.
  callArgsChars: 16 * MiB,
  replyChars: 16 * MiB,
  outputChars: 4 * MiB,
  storeValueChars: 4 * MiB,
  storeTotalChars: 16 * MiB,
  // Every write is journaled: these bound the journal, not the live store.
  storeWrites: 100_000,
  storeWriteChars: 256 * MiB,
  resultChars: 16 * MiB,
  // The host parses and re-serializes every value that crosses; V8 recurses once per level, so
  // depth is bounded far below what its native stack can take.
  valueDepth: 1000,
  // Everything a script holds on the host at once (call arguments in flight, the store), whatever
  // the other limits allow: 256 MiB, below agentCalls × callArgsChars at their ceilings.
  hostBytes: 256 * MiB,
  cpuMs: 60 * 60_000,
});

/**
 * The most WebAssembly memory a workflow worker may grow to for runs of `memoryBytes`: room for
 * QuickJS's own structures and its allocator's slack on top of the limit. See worker.ts.
 */
export const wasmMemoryCap = (memoryBytes        )         => memoryBytes + 64 * MiB;

/** Smallest useful values: a VM cannot even load its prelude below these. */
const LIMIT_FLOORS                          = { memoryBytes: 4 * MiB, stackBytes: 64 * KiB, concurrency: 1, timeoutMs: 1, cpuMs: 1, hostBytes: 1 * MiB };

export const LIMIT_NAMES = Object.freeze(Object.keys(DEFAULT_LIMITS)               );

/** What each limit message calls the limit. */
export const LIMIT_LABELS                                      = Object.freeze({
  timeoutMs: "wall time limit",
  memoryBytes: "memory limit",
  stackBytes: "stack limit",
  agentCalls: "agent call limit",
  concurrency: "concurrency limit",
  toolCalls: "tool call limit",
  callArgsChars: "call arguments limit",
  replyChars: "reply size limit",
  outputChars: "output limit",
  storeValueChars: "store value limit",
  storeTotalChars: "store total limit",
  storeWrites: "store write limit",
  storeWriteChars: "store write size limit",
  resultChars: "result size limit",
  valueDepth: "value depth limit",
  hostBytes: "host memory limit",
  cpuMs: "script CPU time limit",
});

export class LimitsError extends Error {
           code = "limits_invalid";
           limit        ;
  constructor(limit        , message        ) {
    super(message);
    this.name = "LimitsError";
    this.limit = limit;
  }
}

export function isLimitName(name        )                    {
  return Object.hasOwn(DEFAULT_LIMITS, name);
}

/**
 * Fills in defaults and checks each requested limit. Throws LimitsError (code "limits_invalid",
 * `limit` naming the offender) for an unknown name, a value that is not a positive integer, a
 * value below the floor, or one above its ceiling. `undefined` entries take the default.
 */
export function resolveLimits(requested                                   = {})                 {
  const limits                 = { ...DEFAULT_LIMITS };
  for (const [name, value] of Object.entries(requested)) {
    if (value === undefined) continue;
    if (!isLimitName(name)) throw new LimitsError(name, `unknown limit "${capText(name, MAX_QUOTE_CHARS)}"`);
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
      throw new LimitsError(name, `limits.${name} must be a positive integer`);
    }
    const floor = LIMIT_FLOORS[name];
    if (floor !== undefined && value < floor) {
      throw new LimitsError(name, `limits.${name} (${value}) is below its floor (${floor})`);
    }
    const ceiling = LIMIT_CEILINGS[name];
    if (value > ceiling) {
      throw new LimitsError(name, `limits.${name} (${value}) exceeds its ceiling (${ceiling})`);
    }
    limits[name] = value;
  }
  return limits;
}

/** The message a run fails with when it hits `name`, e.g. "agent call limit (8) reached". */
export function limitMessage(name           , limits                )         {
  return `${LIMIT_LABELS[name]} (${limits[name]}) reached`;
}
