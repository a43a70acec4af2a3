import { expect, test } from "vitest";
import { outputSchemaProblem } from "../../src/contract/output-schema-problem.ts";
import { checkStructuredValue } from "../../src/harnesses/structured-answer.ts";

// What the checker does with each schema a child's answer would meet, and what is said before the child is launched.
const loops: Array<[string, Record<string, unknown>, string]> = [
  ["a $ref to the root", { $ref: "#" }, "its root"],
  ["two $defs that point at each other", { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" }, "/$defs/a"],
  ["an allOf that holds the root", { type: "object", allOf: [{ $ref: "#" }] }, "/allOf/0"],
  ["an anyOf whose first branch points back at it", { $defs: { a: { anyOf: [{ $ref: "#/$defs/a" }, { type: "string" }] } }, $ref: "#/$defs/a" }, "/$defs/a"],
];

test.each(loops)("an outputSchema with %s, which the checker would follow until its stack overflows, is refused before any child runs, naming where", async (_name, schema, where) => {
  expect(await checkStructuredValue({}, schema)).toMatchObject({ ok: false, message: expect.stringMatching(/Maximum call stack size exceeded/) });
  expect(outputSchemaProblem(schema)).toBe(
    `outputSchema is not a usable JSON Schema: at ${where} it refers back to itself through $ref, allOf, anyOf, oneOf, not or if/then/else without reaching a property or an item, so checking a value there would never end`,
  );
});

test("recursive schemas that reach a property or item before themselves, and $refs shared by branches, are accepted", async () => {
  const tree = { type: "object", properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } }, required: ["name"] };
  const shared = { $defs: { s: { type: "string", minLength: 1 } }, anyOf: [{ $ref: "#/$defs/s" }, { type: "array", items: { $ref: "#/$defs/s" } }], not: { $ref: "#/$defs/s", maxLength: 0 } };
  for (const schema of [tree, shared]) expect(outputSchemaProblem(schema)).toBeUndefined();
  expect(await checkStructuredValue({ name: "a", children: [{ name: "b", children: [] }] }, tree)).toMatchObject({ ok: true });
  expect(await checkStructuredValue(["s"], shared)).toMatchObject({ ok: true });
});
