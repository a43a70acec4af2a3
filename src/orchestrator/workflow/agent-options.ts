// agent() options are checked against the schema derived from external_delegate's input
// (src/contract/script-schemas.ts): the same fields, minimums and refusal of unknown fields, so a
// call that external_delegate would refuse is refused here too, as request_invalid.
import { compile, type JsonSchema } from "@earendil-works/pi-schema";
import { firstViolation } from "../../contract/schema-violation.ts";
import { FlowError } from "../../contract/errors.ts";
import { agentOptionsSchema } from "../../contract/script-schemas.ts";
import { checkTarget } from "../../contract/child-target.ts";
import { closestName } from "../../../runtime/closest-name.ts";
import type { ChildCall } from "../child/index.ts";

/** The schema's names and its compiled check, built on the first agent() call, not at extension load. */
let checker: { names: ReadonlySet<string>; validator: ReturnType<typeof compile> } | undefined;
function agentChecker(): NonNullable<typeof checker> {
  if (checker) return checker;
  const schema = agentOptionsSchema();
  checker = { names: new Set(Object.keys(schema.properties as object)), validator: compile(schema as JsonSchema) };
  return checker;
}

/**
 * Throws request_invalid naming the first problem; on success `options` is a ChildCall without its
 * default description. `roles`: the project's roles, named when the call selects neither a role nor an agent definition.
 */
export function checkAgentOptions(options: unknown, roles?: () => readonly string[]): asserts options is Omit<ChildCall, "description"> & { description?: string } {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new FlowError("request_invalid", "agent() takes one options object.");
  }
  const { names, validator } = agentChecker();
  const unknown = Object.keys(options).filter((key) => !names.has(key));
  if (unknown.length > 0) {
    const named = unknown.map((key) => {
      const near = closestName(key, names);
      return near ? `${key} (did you mean ${near}?)` : key;
    });
    throw new FlowError("request_invalid", `agent() does not take ${named.join(", ")}.`);
  }
  checkTarget(options, roles); // the branch rules first, in words
  const violation = firstViolation(validator, options);
  if (!violation) return;
  const path = violation.pointer.slice(1).replaceAll("/", ".");
  throw new FlowError("request_invalid", `agent() option ${path || "options"}: ${violation.message}.`);
}
