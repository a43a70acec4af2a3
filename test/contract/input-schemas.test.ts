import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { TOOL_NAMES } from "../../src/contract/envelope.ts";
import { TOOL_METADATA, TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import { HARNESS_NAMES } from "../../src/harnesses/registry.ts";
import { schemaViolation } from "../support/schema.ts";

const delegate = TOOL_SCHEMAS.external_delegate.input;
const base = { description: "Check build", prompt: "Run the build and report." };

describe("external_delegate input", () => {
  test("accepts either selector branch with the shared properties", () => {
    expect(schemaViolation(delegate, { ...base, role: "worker", harness: "claude", context: { mode: "recent", turns: 2 } })).toBeNull();
    expect(schemaViolation(delegate, { ...base, subagent_type: "scout", context: { mode: "full" }, background: true })).toBeNull();
  });

  test("rejects role with subagent_type, and subagent_type with harness", () => {
    expect(schemaViolation(delegate, { ...base, role: "worker", subagent_type: "scout" })).toMatch(/must not match the schema in not/);
    expect(schemaViolation(delegate, { ...base, subagent_type: "scout", harness: "pi" })).toMatch(/must not match the schema in not/);
  });

  test("harness description names every shipped harness as available, here and in the generated helpers and declarations", () => {
    const branches = (delegate as unknown as { anyOf: { properties: Record<string, { description?: string }> }[] }).anyOf;
    const described = branches.map((branch) => branch.properties.harness?.description).filter((text) => text !== undefined);
    expect(described).toHaveLength(1);
    for (const name of HARNESS_NAMES) expect(described[0]).toContain(name);
    for (const file of ["../../helpers/contract-schemas.ts", "../../workflows/flow.d.ts"]) {
      const text = readFileSync(fileURLToPath(new URL(file, import.meta.url)), "utf8");
      expect(text).toContain(described[0]);
      expect(text).not.toMatch(/not shipped/);
    }
    expect(described[0]).not.toMatch(/not shipped/);
  });

  test("requires a selector, a description and a prompt", () => {
    expect(schemaViolation(delegate, base)).not.toBeNull();
    expect(schemaViolation(delegate, { role: "worker", prompt: "p" })).not.toBeNull();
    expect(schemaViolation(delegate, { role: "worker", description: "d" })).not.toBeNull();
  });

  test("each branch repeats the shared properties and required fields", () => {
    const branches = (delegate as unknown as { anyOf: { properties: Record<string, unknown>; required: string[] }[] }).anyOf;
    expect(branches).toHaveLength(2);
    for (const branch of branches) {
      for (const shared of ["description", "prompt", "context", "background", "model", "outputSchema"]) {
        expect(Object.keys(branch.properties)).toContain(shared);
      }
      expect(branch.required).toEqual(expect.arrayContaining(["description", "prompt"]));
    }
  });
});

describe("other inputs", () => {
  test("external_workflow takes a workflow or a script with args, and leaves the source count to execute", () => {
    const workflow = TOOL_SCHEMAS.external_workflow.input;
    expect(schemaViolation(workflow, { workflow: "review", args: { target: "x" } })).toBeNull();
    expect(schemaViolation(workflow, { script: "return 1;", background: true, description: "d" })).toBeNull();
    // Both or neither reach execute, which answers request_invalid as a receipt.
    expect(schemaViolation(workflow, {})).toBeNull();
    expect(schemaViolation(workflow, { workflow: "review", sources: 2 })).not.toBeNull();
  });

  test("external_runs knows its actions and views", () => {
    const runs = TOOL_SCHEMAS.external_runs.input;
    expect(schemaViolation(runs, { action: "inspect", runIds: ["a"], view: "final", limitBytes: 64 })).toBeNull();
    expect(schemaViolation(runs, { action: "delete" })).not.toBeNull();
    expect(schemaViolation(runs, { action: "inspect", view: "everything" })).not.toBeNull();
  });

  test("every documented example validates against its tool's input schema", () => {
    for (const name of TOOL_NAMES) {
      for (const example of TOOL_METADATA[name].examples) {
        expect({ tool: name, title: example.title, violation: schemaViolation(TOOL_SCHEMAS[name].input, example.input) }).toEqual({
          tool: name,
          title: example.title,
          violation: null,
        });
      }
    }
  });
});
