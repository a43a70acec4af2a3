// The contract's branch rules of one child call (role or subagent_type, never both; no harness
// with subagent_type), in words. external_delegate's schema says them as oneOf/not, where a schema
// check would only say that no branch matched; agent()'s option check and prepareChild both ask here.
import { FlowError } from "./errors.ts";

/** The most names a message lists: a project may hold any number of role files or workflows. */
export const MAX_LISTED_NAMES = 20;

/** `names` sorted, the first MAX_LISTED_NAMES of them, then how many more: "a, b, … and 3 more". */
export function listedNames(names: readonly string[]): string {
  const sorted = [...names].sort();
  const more = sorted.length > MAX_LISTED_NAMES ? `, … and ${sorted.length - MAX_LISTED_NAMES} more` : "";
  return `${sorted.slice(0, MAX_LISTED_NAMES).join(", ")}${more}`;
}

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
