// docs/contract.md restates each tool's input in its "Inputs" section: a reader who trusts it must
// not miss a field, an action or a view the registered schema takes, nor a harness help answers for.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { TSchema } from "@sinclair/typebox";
import { TOOL_NAMES, type ToolName } from "../../src/contract/envelope.ts";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import { RUN_ACTIONS, RUN_VIEWS } from "../../src/contract/runs-schema.ts";
import { HARNESS_HELP } from "../../src/help/topics.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

const page = readFileSync(join(PROJECT_ROOT, "docs", "contract.md"), "utf8");
const inputs = page.slice(page.indexOf("## Inputs"), page.indexOf("## The run view"));

/** The bullet of one tool in the Inputs section: from its name to the next tool's bullet. */
function bulletOf(tool: ToolName): string {
  const start = inputs.indexOf(`- \`${tool}\`:`);
  expect(start, `docs/contract.md's Inputs has a bullet for ${tool}`).toBeGreaterThanOrEqual(0);
  const next = inputs.indexOf("\n- `", start + 1);
  return inputs.slice(start, next < 0 ? undefined : next);
}

/** Every property a tool's input takes, over all of its selector branches. */
function fieldsOf(schema: TSchema): string[] {
  const branches = (schema.anyOf as TSchema[] | undefined) ?? [schema];
  return [...new Set(branches.flatMap((branch) => Object.keys((branch.properties as Record<string, unknown>) ?? {})))];
}

const unnamed = (text: string, names: readonly string[]) => names.filter((name) => !text.includes(`\`${name}\``));

it.each(TOOL_NAMES)("the Inputs bullet of %s names every field of its registered input schema", (tool) => {
  expect(unnamed(bulletOf(tool), fieldsOf(TOOL_SCHEMAS[tool].input))).toEqual([]);
});

it("the Inputs bullet of external_runs names every action and every view", () => {
  const bullet = bulletOf("external_runs");
  expect({ actions: unnamed(bullet, RUN_ACTIONS), views: unnamed(bullet, RUN_VIEWS) }).toEqual({ actions: [], views: [] });
});

it("the external_help table names every harness help answers for", () => {
  const row = page.split("\n").find((line) => line.startsWith('| `{ topic: "harnesses", harness? }`'));
  expect(row).toBeDefined();
  expect(unnamed(row!, Object.keys(HARNESS_HELP))).toEqual([]);
});
