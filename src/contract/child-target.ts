// The contract's branch rules of one child call (role or subagent_type, never both; no harness
// with subagent_type), in words. external_delegate's schema says them as oneOf/not, where a schema
// check would only say that no branch matched; agent()'s option check and prepareChild both ask here.
import { FlowError } from "./errors.ts";
import { listedNames } from "./listed-names.ts";

/** " (roles here: …)" for a call that names neither role nor subagent_type; empty when there are none. */
export const rolesHere = (roles: readonly string[]): string => (roles.length > 0 ? ` (roles here: ${listedNames(roles)})` : "");

/**
 * Throws request_invalid saying which branch rule the call breaks. `roles`: the roles the caller's
 * project has, read only when the call names neither, to name them as `flow check` does.
 */
export function checkTarget(call: { role?: unknown; subagent_type?: unknown; harness?: unknown }, roles?: () => readonly string[]): void {
  if (call.role !== undefined && call.subagent_type !== undefined) throw new FlowError("request_invalid", "Give role or subagent_type, not both.");
  if (call.role === undefined && call.subagent_type === undefined) throw new FlowError("request_invalid", `Give role or subagent_type${roles ? rolesHere(roles()) : ""}.`);
  if (call.subagent_type !== undefined && call.harness !== undefined) {
    throw new FlowError("request_invalid", "subagent_type always runs on the pi harness; leave harness out.");
  }
}
