// The declarations workflow authors type-check against: pi-flow's tools, the tools a session
// registers, and the saved workflows' arguments, rendered by the runtime's generateDeclarations.
// `flow types` writes them for a project; workflows/flow.d.ts is the shipped set.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TOOL_NAMES } from "../../contract/envelope.ts";
import { TOOL_METADATA, TOOL_SCHEMAS } from "../../contract/metadata.ts";
import { generateDeclarations, parseWorkflow, type JsonValue, type ToolSchema } from "../../../runtime/index.ts";
import type { SavedWorkflowInfo } from "./catalog.ts";
import { SHIPPED_WORKFLOWS_DIR } from "./sources.ts";

/** A registered tool as Pi describes it: its parameters and, when it has one, its output schema. */
export interface RegisteredToolSchema {
  name: string;
  description?: string;
  parameters: unknown;
  outputSchema?: unknown;
}

export function toolSchemaOf(tool: RegisteredToolSchema): ToolSchema {
  return {
    ...(tool.description ? { description: tool.description } : {}),
    input: tool.parameters as JsonValue,
    ...(tool.outputSchema !== undefined ? { output: tool.outputSchema as JsonValue } : {}),
  };
}

/** pi-flow's own four tools, from the very schemas they register. */
export function flowToolSchemas(): Record<string, ToolSchema> {
  return Object.fromEntries(
    TOOL_NAMES.map((name) => [name, toolSchemaOf({ name, description: TOOL_METADATA[name].purpose, parameters: TOOL_SCHEMAS[name].input, outputSchema: TOOL_SCHEMAS[name].output })]),
  );
}

/** Name -> meta.args of each usable saved workflow; one that cannot run is left out (flow check says why). */
function workflowArgs(workflows: readonly SavedWorkflowInfo[]): Record<string, unknown> {
  return Object.fromEntries(workflows.filter((workflow) => workflow.problem === undefined).map((workflow) => [workflow.name, workflow.args]));
}

/** The shipped workflows' arguments, read from their files. */
function shippedWorkflowArgs(): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const file of readdirSync(SHIPPED_WORKFLOWS_DIR).filter((name) => name.endsWith(".js")).sort()) {
    const path = join(SHIPPED_WORKFLOWS_DIR, file);
    args[file.slice(0, -3)] = parseWorkflow(readFileSync(path, "utf8"), { origin: "saved", path }).meta.args;
  }
  return args;
}

/** workflows/flow.d.ts: pi-flow's tools and the shipped workflows. `npm run build:types` rewrites it. */
export function shippedDeclarations(): Promise<string> {
  return generateDeclarations({
    toolSchemas: flowToolSchemas(),
    workflows: shippedWorkflowArgs(),
    generatedBy: "npm run build:types, for the shipped workflows; `flow types` writes one for your project",
  });
}

/** A project's declarations: every tool its session can call and every saved workflow it can run. */
export function projectDeclarations(tools: readonly RegisteredToolSchema[], workflows: readonly SavedWorkflowInfo[]): Promise<string> {
  return generateDeclarations({
    toolSchemas: Object.fromEntries(tools.map((tool) => [tool.name, toolSchemaOf(tool)])),
    workflows: workflowArgs(workflows),
    generatedBy: "flow types",
  });
}
