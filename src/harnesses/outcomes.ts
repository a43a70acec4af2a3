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

/** The most of a child's error an undelivered steer's note quotes: it is said once per steer. */
const WHY_CHARS = 300;

/**
 * Why a child that ended did not read a steer, from how it ended; `answered` replaces the words for
 * a child that succeeded (a fleet child's harness may take no steers).
 */
export function unreadBecause(result: ChildResult, answered = "the child answered before it read it"): string {
  if (result.outcome === "succeeded") return answered;
  if (result.outcome === "cancelled") return "the child was cancelled before it read it";
  if (result.outcome === "timed_out") return "the child ran out of time before it read it";
  const error = result.error?.message;
  const quoted = error === undefined ? "" : `: ${error.length > WHY_CHARS ? `${error.slice(0, WHY_CHARS)}...` : error}`;
  return `the child ended failed before it read it${quoted}`;
}
