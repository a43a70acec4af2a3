import { expect, test } from "vitest";
import { argumentLines } from "../../src/ui/argument-lines.ts";

test("/flow workflows shows each argument's name, type, whether it is required, its default and description", () => {
  const lines = argumentLines({
    type: "object",
    properties: {
      target: { type: "string", description: "What to review." },
      lenses: { type: "array", items: { enum: ["correctness", "tests"] } },
      depth: { type: "integer", minimum: 1, maximum: 5, default: 2 },
      mode: { anyOf: [{ type: "string" }, { type: "null" }] },
    },
    required: ["target"],
  });
  expect(lines).toEqual([
    "  args:",
    "    target (string, required): What to review.",
    '    lenses (array of one of "correctness", "tests", optional)',
    "    depth (integer 1–5, optional, default 2)",
    "    mode (string or null, optional)",
  ]);
});

test("a workflow with no arguments, any object, or a schema that is not an object of properties", () => {
  expect(argumentLines(undefined)).toEqual([]);
  expect(argumentLines({ type: "object", properties: {} })).toEqual(["  args: none"]);
  expect(argumentLines({ type: "object" })).toEqual(["  args: any object"]);
  expect(argumentLines({ type: "string" })).toEqual(['  args: {"type":"string"}']);
});
