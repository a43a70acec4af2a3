// Endings every harness reports the same way.
import type { ChildRequest, ChildResult, ChildUsage } from "./types.ts";

/** A child stopped from outside: timed out when its time limit fired, else cancelled. */
export function stoppedResult(request: ChildRequest, usage: ChildUsage): ChildResult {
  return request.timedOut()
    ? { outcome: "timed_out", error: { code: "timed_out", message: "The child ran out of time." }, usage }
    : { outcome: "cancelled", error: { code: "cancelled", message: "The child was cancelled." }, usage };
}
