// The worker's checks of what the script hands the host, before the host ever parses it: a value
// nested past valueDepth, what would make the host hold more than hostBytes, the return value.
import { jsonDepth } from "./json.ts";
import { limitMessage } from "./limits.ts";
import type { VmOutcome } from "./protocol.ts";
import type { WorkflowLimits } from "./types.ts";
import { limitFailure, refuseLimit } from "./vm-failure.ts";
import type { HostReply } from "./vm-prepared.ts";

/** JavaScript strings take at most two bytes per character: hostBytes counts that bound. */
const BYTES_PER_CHAR = 2;

/** Refuses a value nested past valueDepth. */
export function valueTooDeep(text: string, limits: WorkflowLimits, what: string): HostReply | undefined {
  const limit = limits.valueDepth;
  if (jsonDepth(text, limit) <= limit) return undefined;
  return refuseLimit("valueDepth", `${limitMessage("valueDepth", limits)}: ${what} nests deeper than ${limit} levels`);
}

/** Refuses what would make the host hold more than hostBytes of this run's data at once. */
export function overHostBytes(heldChars: number, limits: WorkflowLimits, what: string): HostReply | undefined {
  const bytes = heldChars * BYTES_PER_CHAR;
  if (bytes <= limits.hostBytes) return undefined;
  return refuseLimit("hostBytes", `${limitMessage("hostBytes", limits)}: ${what} would make the host hold ${bytes} bytes of this run's data (calls in flight and the store)`);
}

/** The run's outcome for the script's return value (its JSON text, or undefined): within resultChars and valueDepth, or that limit. */
export function settledValue(text: string | undefined, limits: WorkflowLimits): VmOutcome {
  if (text === undefined) return { ok: true };
  if (text.length > limits.resultChars) return { ok: false, error: limitFailure("resultChars", limits, `the return value has ${text.length} characters of JSON`) };
  if (jsonDepth(text, limits.valueDepth) > limits.valueDepth) return { ok: false, error: limitFailure("valueDepth", limits, `the return value nests deeper than ${limits.valueDepth} levels`) };
  return { ok: true, text };
}
