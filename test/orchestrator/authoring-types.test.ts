import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { shippedDeclarations } from "../../src/orchestrator/workflow/authoring-types.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

const scratch = mkdtempSync(join(tmpdir(), "pi-flow-types-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const tsc = (project: string): string => {
  try {
    execFileSync(process.execPath, [join(PROJECT_ROOT, "node_modules/typescript/bin/tsc"), "-p", project], { encoding: "utf8" });
    return "";
  } catch (error) {
    return String((error as { stdout?: string }).stdout);
  }
};

describe("workflows/flow.d.ts and workflows/tsconfig.json", () => {
  it("flow.d.ts is what npm run build:types writes: pi-flow's tools and the shipped workflows", async () => {
    expect(readFileSync(join(PROJECT_ROOT, "workflows/flow.d.ts"), "utf8")).toBe(await shippedDeclarations());
  });

  it("the shipped workflows type-check, and a mistake in a tool call, a result or args does not", () => {
    const folder = join(scratch, "shipped");
    cpSync(join(PROJECT_ROOT, "workflows"), folder, { recursive: true });
    // One tsc run for both: the shipped files beside the mistakes must add no error of their own.
    writeFileSync(
      join(folder, "mistakes.js"),
      `export const apiVersion = 1;
/** @satisfies {WorkflowMeta} */
export const meta = { name: "review", descripton: "typo" };
/** @param {WorkflowInput<"review">} input */
export default async function ({ args }) {
  const runs = await tools.external_runs({ action: "lsit" });
  if (runs.ok && runs.data.runs) return runs.data.runs.map((run) => run.runld);
  return args.targt;
}
`,
    );
    // readFinal() takes a receipt's run as the docs show, with or without refs (absent in a session not saved to a file).
    writeFileSync(
      join(folder, "reads-final.js"),
      `export const apiVersion = 1;
/** @satisfies {WorkflowMeta} */
export const meta = { name: "reads-final", description: "d", tools: ["external_delegate", "external_workflow"] };
export default async function () {
  const child = await tools.external_delegate({ role: "worker", description: "d", prompt: "p" });
  const nested = await tools.external_workflow({ script: "return 1;" });
  return child.ok && nested.ok ? [await readFinal(child.data.run), await readFinal(nested.data.run)] : null;
}
`,
    );
    const errors = tsc(folder);
    expect(errors).toMatch(/mistakes\.js\(3,.*descripton/);
    expect(errors).toMatch(/mistakes\.js\(6,.*"lsit"/);
    expect(errors).toMatch(/mistakes\.js\(7,.*runld/);
    expect(errors).toMatch(/mistakes\.js\(8,.*targt/);
    // Those four and nothing else: the correct lines around them, and every shipped workflow, check clean.
    expect(errors.match(/error TS\d+/g)).toHaveLength(4);
    expect(errors.split("\n").filter((line) => / error TS\d+/.test(line) && !/mistakes\.js\(/.test(line))).toEqual([]);
  });
});
