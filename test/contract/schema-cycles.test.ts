import { expect, test } from "vitest";
import { outputSchemaProblem } from "../../src/harnesses/output-schema-problem.ts";
import { checkStructuredValue } from "../../src/harnesses/structured-answer.ts";

// What the checker does with each schema a child's answer would meet, and what is said before the child is launched.
const loops: Array<[string, Record<string, unknown>, string]> = [
  ["a $ref to the root", { $ref: "#" }, "its root"],
  ["two $defs that point at each other", { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" }, "/$defs/a"],
  ["an allOf that holds the root", { type: "object", allOf: [{ $ref: "#" }] }, "/allOf/0"],
  ["an anyOf whose first branch points back at it", { $defs: { a: { anyOf: [{ $ref: "#/$defs/a" }, { type: "string" }] } }, $ref: "#/$defs/a" }, "/$defs/a"],
  // The same loops, reached by the schema's $id or an $anchor instead of a JSON pointer, or through dependentSchemas.
  ["a $ref to the root's $id", { $id: "https://example.com/s", $defs: { a: { $ref: "https://example.com/s" } }, $ref: "#/$defs/a" }, "its root"],
  ["a $ref to a $defs entry by the root's $id and a pointer", { $id: "https://example.com/s", $defs: { a: { $ref: "https://example.com/s#/$defs/a" } }, $ref: "#/$defs/a" }, "/$defs/a"],
  ["a $ref to an $anchor that holds it", { $defs: { a: { $anchor: "A", allOf: [{ $ref: "#A" }] } }, $ref: "#A" }, "/$defs/a"],
  ["a dependentSchemas entry that holds the root", { type: "object", dependentSchemas: { a: { $ref: "#" } } }, "/dependentSchemas/a"],
  ["a $dynamicRef to the $dynamicAnchor that holds it", { $dynamicAnchor: "node", allOf: [{ $dynamicRef: "#node" }] }, "/allOf/0"],
  ["a draft-07 dependencies entry that holds the root", { type: "object", dependencies: { a: { $ref: "#" } } }, "/dependencies/a"],
];

test.each(loops)("an outputSchema with %s, which the checker would follow until its stack overflows, is refused before any child runs, naming where", async (_name, schema, where) => {
  expect(await checkStructuredValue({ a: 1 }, schema)).toMatchObject({ ok: false, message: expect.stringMatching(/Maximum call stack size exceeded/) });
  expect(await outputSchemaProblem(schema)).toBe(
    `outputSchema is not a usable JSON Schema: at ${where} it refers back to itself through $ref, $dynamicRef, allOf, anyOf, oneOf, not, if/then/else or dependentSchemas without reaching a property or an item, so checking a value there would never end`,
  );
});

test("recursive schemas that reach a property or item before themselves, and $refs shared by branches, are accepted", async () => {
  const tree = { type: "object", properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } }, required: ["name"] };
  const shared = { $defs: { s: { type: "string", minLength: 1 } }, anyOf: [{ $ref: "#/$defs/s" }, { type: "array", items: { $ref: "#/$defs/s" } }], not: { $ref: "#/$defs/s", maxLength: 0 } };
  for (const schema of [tree, shared]) expect(await outputSchemaProblem(schema)).toBeUndefined();
  expect(await checkStructuredValue({ name: "a", children: [{ name: "b", children: [] }] }, tree)).toMatchObject({ ok: true });
  expect(await checkStructuredValue(["s"], shared)).toMatchObject({ ok: true });
});

// The big schemas below are about what is said, not how fast: a busy machine gets all the time it needs.
const noTimeLimit = { limitMs: 600_000 };

test("an outputSchema nested 10,000 levels deep, or with 10,000 properties, is refused naming the limit it is past, before the compiler reads it", async () => {
  // Built as text: JSON.stringify itself overflows the stack on a value this deep.
  const deep = JSON.parse(`${'{"type":"object","properties":{"a":'.repeat(10_000)}{}${"}}".repeat(10_000)}`) as unknown;
  expect(await outputSchemaProblem(deep, noTimeLimit)).toBe(
    "outputSchema is not a usable JSON Schema: it nests objects and arrays more than 256 levels deep, the most a schema may (MAX_SCHEMA_DEPTH)",
  );
  const wide = { type: "object", properties: Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`p${index}`, { type: "string" }])) };
  expect(await outputSchemaProblem(wide, noTimeLimit)).toBe(
    "outputSchema is not a usable JSON Schema: it holds more than 5000 objects and arrays outside enum, const, default and examples, the most a schema may (MAX_SCHEMA_OBJECTS)",
  );
  // Data is not schemas: an enum of 10,000 objects is not counted.
  expect(await outputSchemaProblem({ enum: Array.from({ length: 10_000 }, (_, index) => ({ id: index })) }, noTimeLimit)).toBeUndefined();
});

test("a model's outputSchema of 200,000 required names, or of 10,000 properties, is checked in the schema worker: Pi's thread walks none of it", async () => {
  // Counted, not timed: the host's own count of schema nodes walked stays where it was.
  const { schemaSizeWalks } = await import("../../runtime/schema-check.ts");
  const before = schemaSizeWalks.nodes;
  const required = { type: "object", required: Array.from({ length: 200_000 }, (_, index) => `name${index}`) };
  expect(await outputSchemaProblem(required, noTimeLimit)).toBeUndefined();
  const wide = { type: "object", properties: Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`p${index}`, { type: "string" }])) };
  expect(await outputSchemaProblem(wide, noTimeLimit)).toMatch(/the most a schema may \(MAX_SCHEMA_OBJECTS\)$/);
  expect(await outputSchemaProblem({ type: "strng" })).toMatch(/^outputSchema is not a usable JSON Schema: /);
  expect(schemaSizeWalks.nodes).toBe(before);
});

test("an outputSchema holding a number past JSON's (1e400, read as Infinity) is refused before any child runs, not failed later with 'expected null'", async () => {
  // As a model's tool call arrives: parsed from JSON text.
  const schema = JSON.parse('{"type":"object","properties":{"size":{"const":1e400}},"required":["size"]}') as Record<string, unknown>;
  expect(await checkStructuredValue({ size: null }, schema)).toMatchObject({ ok: false, message: expect.stringMatching(/expected null/) });
  const refused = "it holds a number JSON cannot write (such as 1e400, which reads as Infinity and is saved as null); write a finite one";
  expect(await outputSchemaProblem(schema)).toBe(`outputSchema is not a usable JSON Schema: ${refused}`);
  expect(await outputSchemaProblem({ enum: [1, -1e400] })).toBe(`outputSchema is not a usable JSON Schema: ${refused}`);
});
