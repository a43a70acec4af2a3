// The helper library scripts see, and WORKFLOW_HELPERS: its compact description for external_help.
import { SCRIPT_GLOBALS } from "./globals.ts";
import { handoff } from "./handoff.ts";
import { parallel } from "./parallel.ts";
import { readFinal } from "./read-final.ts";
import { retry } from "./retry.ts";
import { AGENT_OPTIONS_SCHEMA, type SchemaObject } from "./schemas.ts";
import type { GlobalDoc, HelperDefinition, HelperDoc } from "./types.ts";

export type { GlobalDoc, HelperDefinition, HelperDoc } from "./types.ts";
export { HANDOFF_FRESHNESS_NOTE, HANDOFF_HEADER } from "./handoff.ts";
export { SCRIPT_GLOBALS } from "./globals.ts";
export { AGENT_OPTIONS_SCHEMA, RUN_VIEW_SCHEMA, SCRIPT_SCHEMAS, type SchemaObject } from "./schemas.ts";

/** Every helper, in the order the prelude defines them. */
export const HELPERS: readonly HelperDefinition[] = [parallel, retry, readFinal, handoff];

export interface WorkflowHelpers {
  functions: HelperDoc[];
  globals: Array<Pick<GlobalDoc, "name" | "signature" | "description">>;
  agentOptions: SchemaObject;
}

const doc = ({ name, signature, description }: HelperDoc): HelperDoc => ({ name, signature, description });

export const WORKFLOW_HELPERS: Readonly<WorkflowHelpers> = Object.freeze({
  functions: HELPERS.map(doc),
  globals: SCRIPT_GLOBALS.map(doc),
  agentOptions: AGENT_OPTIONS_SCHEMA,
});
