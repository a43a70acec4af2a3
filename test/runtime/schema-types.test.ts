import { expect, test } from "vitest";
import { schemaToType } from "../../runtime/schema-types.ts";

test("a union of object schemas names the other branches' keys as absent; enum and const values are data and keep their shape", async () => {
  const union = { anyOf: [{ properties: { x: { type: "string" } } }, { properties: { y: { type: "string" } } }] };
  const schema = {
    type: "object",
    properties: {
      choice: { type: "object", ...union },
      pick: { enum: [{ oneOf: union.anyOf }] },
    },
  };
  const declaration = await schemaToType(schema, "Input", { closed: true, normalize: true });
  // The schema's union: each branch says the other's key is absent, so `choice.y` reads on both.
  expect(declaration).toMatch(/x\?: string;\s+y\?: never;/);
  // The enum's one value is an object that happens to look like a schema: rendered as it is.
  expect(declaration).toContain("pick?: {oneOf: [{properties: {x: {type: \"string\"}}}, {properties: {y: {type: \"string\"}}}]};");
});
