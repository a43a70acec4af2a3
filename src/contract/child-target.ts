// The contract's branch rules of one child call (role or subagent_type, never both; no harness
// with subagent_type), in words. external_delegate's schema says them as oneOf/not, where a schema
// check would only say that no branch matched; agent()'s option check and prepareChild both ask here.
import { FlowError } from "./errors.ts";

/** Throws request_invalid saying which branch rule the call breaks. */
export function checkTarget(call: { role?: unknown; subagent_type?: unknown; harness?: unknown }): void {
  if (call.role !== undefined && call.subagent_type !== undefined) throw new FlowError("request_invalid", "Give role or subagent_type, not both.");
  if (call.role === undefined && call.subagent_type === undefined) throw new FlowError("request_invalid", "Give role or subagent_type.");
  if (call.subagent_type !== undefined && call.harness !== undefined) {
    throw new FlowError("request_invalid", "subagent_type always runs on the pi harness; leave harness out.");
  }
}
