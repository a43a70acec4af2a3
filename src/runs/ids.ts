import { randomInt } from "node:crypto";
import { FlowError } from "../contract/errors.ts";

export type RunKind = "agent" | "workflow";

/**
 * Run IDs look like `ag_0m3k2x9a1_7fq2k9z0bd` (agent) or `wf_…` (workflow): a kind prefix, the start
 * time in base36 milliseconds (fixed width, so IDs sort by start time and a listing needs no record
 * reads to order rows), and 50 random bits. The alphabet is lowercase alphanumerics only, so a valid
 * ID is always a safe single path segment.
 */
const RUN_ID = /^(ag|wf)_[0-9a-z]{9}_[0-9a-z]{10}$/;
const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
const PREFIX: Record<RunKind, string> = { agent: "ag", workflow: "wf" };

export const RUN_ID_PATTERN = RUN_ID.source;

export function newRunId(kind: RunKind, now: number = Date.now()): string {
  const time = Math.max(0, Math.floor(now)).toString(36).padStart(9, "0").slice(-9);
  let rand = "";
  for (let i = 0; i < 10; i++) rand += ALPHABET[randomInt(36)];
  return `${PREFIX[kind]}_${time}_${rand}`;
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
    const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 64)) : typeof value;
    throw new FlowError("request_invalid", `Malformed run ID ${shown}: expected ag_… or wf_… as returned by a Flow tool.`);
  }
  return value;
}
