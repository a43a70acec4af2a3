// The contract's schemas as workflow scripts see them. agent() takes external_delegate's input
// (the same fields, minimums and rule for unknown fields) except `background` (a workflow's
// children are foreground runs of it) and with `description` optional (derived from the prompt);
// readFinal() takes the part of a run view it reads. `npm run build:types` writes these into
// helpers/contract-schemas.ts for the runtime, which cannot import src/; a test keeps them equal.
import { DelegateInputSchema } from "./delegate-schema.ts";
import { ReceiptRunViewSchema } from "./run-schema.ts";

type Schema = { [key: string]: unknown };

/** A plain JSON copy: TypeBox's symbol keys dropped, nothing shared with the source. */
const plain = (schema: unknown): Schema => JSON.parse(JSON.stringify(schema)) as Schema;

/** Delegate options a workflow's agent() does not take. */
const DELEGATE_ONLY = ["background"];

function branches(): { role: Schema; subagent: Schema } {
  const [role, subagent] = (plain(DelegateInputSchema).anyOf as Schema[]) ?? [];
  if (!role?.properties || !subagent?.properties) throw new Error("external_delegate's input is no longer a role branch and a subagent branch");
  return { role, subagent };
}

/**
 * agent()'s options: one object holding both branches' properties, closed like each branch, and a
 * oneOf that keeps the branches apart: role or subagent_type, exactly one, and harness only with role.
 */
export function agentOptionsSchema(): Schema {
  const { role, subagent } = branches();
  const roleProperties = role.properties as Schema;
  const subagentProperties = subagent.properties as Schema;
  const properties: Schema = { ...roleProperties, ...subagentProperties };
  for (const key of DELEGATE_ONLY) delete properties[key];
  const absent = (from: Schema, other: Schema) => Object.fromEntries(Object.keys(other).filter((key) => !(key in from)).map((key) => [key, false]));
  return {
    type: "object",
    description:
      "Options of agent(): external_delegate's input without background, and description optional (default: derived from the prompt). Exactly one of role or subagent_type; harness only with role. Any other field is request_invalid.",
    properties,
    required: ["prompt"],
    additionalProperties: false,
    oneOf: [
      { properties: { role: roleProperties.role, ...absent(roleProperties, subagentProperties) }, required: ["role"] },
      { properties: { subagent_type: subagentProperties.subagent_type, ...absent(subagentProperties, roleProperties) }, required: ["subagent_type"] },
    ],
  };
}

/** What readFinal() reads of a run view, with the contract's own types and descriptions. */
const READ_FINAL_FIELDS: { [key: string]: readonly string[] } = { runId: [], output: ["delivery", "value", "finalAvailable"], refs: ["final"] };

export function readFinalRunSchema(): Schema {
  // A receipt's run: refs are absent in a session not saved to a file, and readFinal() takes it all the same.
  const view = plain(ReceiptRunViewSchema);
  const viewProperties = view.properties as Schema;
  const pick = (schema: Schema, keys: readonly string[]): Schema => {
    if (keys.length === 0) return schema;
    const source = schema.properties as Schema;
    const picked: Schema = { ...schema, properties: Object.fromEntries(keys.map((key) => [key, source[key]])) };
    const required = ((schema.required as string[] | undefined) ?? []).filter((key) => keys.includes(key));
    if (required.length > 0) picked.required = required;
    else delete picked.required;
    return picked;
  };
  return pick(
    {
      ...view,
      description: "The part of a run view (receipt.data.run) readFinal() reads.",
      properties: Object.fromEntries(Object.entries(READ_FINAL_FIELDS).map(([key, keys]) => [key, pick(viewProperties[key] as Schema, keys)])),
    },
    Object.keys(READ_FINAL_FIELDS),
  );
}

/** helpers/contract-schemas.ts as `npm run build:types` writes it. */
export function contractSchemasModule(): string {
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  return `// Generated from src/contract/script-schemas.ts by npm run build:types. Do not edit: the contract is
// the source, and a test fails when this file differs from what it derives.
import type { SchemaObject } from "./types.ts";

/** agent()'s options: external_delegate's input without background, description optional. */
export const AGENT_OPTIONS_SCHEMA: SchemaObject = ${json(agentOptionsSchema())};

/** The part of the contract's run view that readFinal() reads. */
export const RUN_VIEW_SCHEMA: SchemaObject = ${json(readFinalRunSchema())};
`;
}
