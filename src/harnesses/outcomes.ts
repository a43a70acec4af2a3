// Endings every harness reports the same way.
import type { ChildRequest, ChildResult, ChildUsage } from "./types.ts";

/** The abort reason of a child whose time limit fired. */
export const childTimeout = (): DOMException => new DOMException("The child ran out of time.", "TimeoutError");

/** Whether a child's signal was aborted by its time limit rather than by a cancel. */
export function stoppedByTimeout(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof DOMException && signal.reason.name === "TimeoutError";
}

/** A child stopped from outside: timed out when its time limit fired, else cancelled. */
export function stoppedResult(request: ChildRequest, usage: ChildUsage): ChildResult {
  return stoppedByTimeout(request.signal)
    ? { outcome: "timed_out", error: { code: "timed_out", message: "The child ran out of time." }, usage }
    : { outcome: "cancelled", error: { code: "cancelled", message: "The child was cancelled." }, usage };
}
