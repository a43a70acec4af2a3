import { randomBytes } from "node:crypto";
import { FlowError } from "../contract/errors.ts";
import { quoteGiven } from "./controls.ts";

export type RunKind = "agent" | "workflow";

/**
 * Run IDs look like `ag_0m3k2x9a1_7fq2k9z0bd` (agent) or `wf_…` (workflow): a kind prefix, the start
 * time in base36 milliseconds (fixed width, so IDs sort by start time and a listing needs no record
 * reads to order rows), then a per-millisecond sequence and 41 random bits. The alphabet is
 * lowercase alphanumerics only, so a valid ID is always a safe single path segment.
 */
const RUN_ID = /^(ag|wf)_[0-9a-z]{9}_[0-9a-z]{10}$/;
const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
const PREFIX: Record<RunKind, string> = { agent: "ag", workflow: "wf" };

export const RUN_ID_PATTERN = RUN_ID.source;

/** The last millisecond this process named a run in, and how many runs it named in it. */
let lastMs = -1;
let sameMs = 0;
const PER_MS = 36 * 36;

/**
 * A new run ID. Runs a process starts in the same millisecond are numbered in the first two
 * characters after the time, so IDs sort in the order the runs started even when creation takes
 * less than a millisecond (eight random characters, 41 bits, stay).
 */
export function newRunId(kind: RunKind, now: number = Date.now()): string {
  let ms = Math.max(0, Math.floor(now), lastMs); // a clock that steps back does not reorder runs
  if (ms === lastMs) sameMs++;
  else sameMs = 0;
  if (sameMs >= PER_MS) {
    ms = lastMs + 1; // more than 1,296 in one millisecond: borrow the next one
    sameMs = 0;
  }
  lastMs = ms;
  const time = ms.toString(36).padStart(9, "0").slice(-9);
  let rand = sameMs.toString(36).padStart(2, "0");
  while (rand.length < 10) rand += randomChar();
  return `${PREFIX[kind]}_${time}_${rand}`;
}

/**
 * One uniform character of ALPHABET. Random bytes are drawn 256 at a time (one call to the system's
 * generator per 30-odd IDs rather than eight per ID); a byte past the last whole multiple of 36 is
 * skipped, so every character stays equally likely.
 */
const POOL_BYTES = 256;
const UNIFORM_BELOW = 256 - (256 % 36);
let pool = Buffer.alloc(0);
let poolAt = 0;
function randomChar(): string {
  for (;;) {
    if (poolAt >= pool.length) {
      pool = randomBytes(POOL_BYTES);
      poolAt = 0;
    }
    const byte = pool[poolAt++]!;
    if (byte < UNIFORM_BELOW) return ALPHABET[byte % 36]!;
  }
}

export function isRunId(value: unknown): value is string {
  return typeof value === "string" && RUN_ID.test(value);
}

export function runKindOf(runId: string): RunKind {
  return runId.startsWith("wf_") ? "workflow" : "agent";
}

/** Start time encoded in the ID; used for ordering and for retention when a record is unreadable. */
export function runIdTime(runId: string): number {
  return Number.parseInt(runId.slice(3, 12), 36);
}

/** Every input ID passes here before it can reach a path: a malformed one is `request_invalid`. */
export function assertRunId(value: unknown): string {
  if (!isRunId(value)) {
    // Redacted whole, then cut: a token pasted as an ID is never quoted back in part.
    const shown = typeof value === "string" ? quoteGiven(value) : typeof value;
    throw new FlowError("request_invalid", `Malformed run ID ${shown}: expected ag_… or wf_… as returned by a Flow tool.`);
  }
  return value;
}
