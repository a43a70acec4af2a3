import { describe, expect, test } from "vitest";
import { checkStructuredValue } from "../../src/harnesses/structured-answer.ts";
import { childSeed, stubText, valueForSchema } from "../../src/harnesses/stub-values.ts";

type Schema = Record<string, unknown>;

const verdict: Schema = {
  type: "object",
  properties: { verdict: { enum: ["approve", "request_changes"] }, findings: { type: "array", items: { $ref: "#/$defs/finding" } } },
  required: ["verdict", "findings"],
  additionalProperties: false,
  $defs: {
    finding: {
      type: "object",
      properties: { file: { type: "string", minLength: 1 }, line: { type: "integer", minimum: 1 }, severity: { enum: ["low", "medium", "high"] } },
      required: ["file", "line", "severity"],
      additionalProperties: false,
    },
  },
};

/** Schemas a workflow author gives agent() as outputSchema: every one must get a value that satisfies it. */
const CORPUS: [string, Schema][] = [
  ["string", { type: "string" }],
  ["bounded string", { type: "string", minLength: 5, maxLength: 8 }],
  ["pattern", { type: "string", pattern: "^[A-Z]{3}-\\d{2,4}$" }],
  ["email", { type: "string", format: "email" }],
  ["date-time", { type: "string", format: "date-time" }],
  ["date", { type: "string", format: "date" }],
  ["uri", { type: "string", format: "uri" }],
  ["uuid", { type: "string", format: "uuid" }],
  ["ipv4", { type: "string", format: "ipv4" }],
  ["integer bounds", { type: "integer", minimum: 3, maximum: 7 }],
  ["exclusive bounds", { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 }],
  ["multipleOf", { type: "integer", multipleOf: 5, minimum: 10, maximum: 50 }],
  ["boolean", { type: "boolean" }],
  ["null", { type: "null" }],
  ["enum", { enum: ["red", "green", "blue"] }],
  ["const", { const: "fixed" }],
  ["nullable", { type: ["string", "null"] }],
  ["array minItems", { type: "array", items: { type: "string" }, minItems: 3 }],
  ["array bounds", { type: "array", items: { type: "integer" }, minItems: 2, maxItems: 2 }],
  ["uniqueItems", { type: "array", items: { enum: ["a", "b", "c"] }, minItems: 2, uniqueItems: true }],
  ["tuple", { type: "array", prefixItems: [{ type: "string" }, { type: "integer" }], minItems: 2 }],
  ["closed object", { type: "object", properties: { a: { type: "string" }, b: { type: "number" } }, required: ["a", "b"], additionalProperties: false }],
  ["optional properties", { type: "object", properties: { a: { type: "string" }, b: { type: "boolean" } }, additionalProperties: false }],
  ["nested", { type: "object", properties: { outer: { type: "object", properties: { inner: { type: "array", items: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] }, minItems: 1 } }, required: ["inner"] } }, required: ["outer"] }],
  ["$defs $ref", verdict],
  ["definitions $ref", { type: "object", definitions: { score: { type: "integer", minimum: 1, maximum: 10 } }, properties: { score: { $ref: "#/definitions/score" } }, required: ["score"] }],
  ["oneOf", { oneOf: [{ type: "object", properties: { kind: { const: "a" } }, required: ["kind"], additionalProperties: false }, { type: "string", minLength: 1 }] }],
  ["anyOf", { anyOf: [{ type: "integer", minimum: 100 }, { type: "boolean" }] }],
  ["allOf", { allOf: [{ type: "object", properties: { a: { type: "string" } }, required: ["a"] }, { type: "object", properties: { b: { type: "integer" } }, required: ["b"] }] }],
  ["minProperties", { type: "object", additionalProperties: { type: "string" }, minProperties: 2 }],
  ["patternProperties", { type: "object", patternProperties: { "^x-": { type: "integer" } }, additionalProperties: false }],
  ["review synthesis", { type: "object", properties: { summary: { type: "string", minLength: 1 }, blocking: { type: "array", items: { type: "string" } }, confidence: { type: "number", minimum: 0, maximum: 1 } }, required: ["summary", "blocking", "confidence"], additionalProperties: false }],
  ["plan steps", { type: "object", properties: { steps: { type: "array", minItems: 2, maxItems: 5, items: { type: "object", properties: { title: { type: "string" }, files: { type: "array", items: { type: "string" } }, risk: { enum: ["low", "high"] } }, required: ["title", "files", "risk"], additionalProperties: false } } }, required: ["steps"], additionalProperties: false }],
];

describe("stub values", () => {
  test("the corpus is the size the stub promises to cover", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(30);
  });

  test.each(CORPUS)("%s: the value satisfies the schema, by the validator the runtime checks answers with", async (_name, schema) => {
    for (const seed of [0, 1, 42]) {
      const stubbed = await valueForSchema(schema, seed);
      if (!stubbed.ok) throw new Error(stubbed.message);
      expect(await checkStructuredValue(stubbed.value, schema)).toEqual({ ok: true, value: stubbed.value });
    }
  });

  test("the same seed gives the same value; another seed may give another", async () => {
    expect(await valueForSchema(verdict, 7)).toEqual(await valueForSchema(verdict, 7));
    const values = new Set(await Promise.all([1, 2, 3, 4, 5].map(async (seed) => JSON.stringify(await valueForSchema(verdict, seed)))));
    expect(values.size).toBeGreaterThan(1);
  });

  test("a child's seed follows who asked, not the order children start in", () => {
    const call = { agent: "role:reviewer", description: "Review", occurrence: 1 };
    expect(childSeed(3, call)).toBe(childSeed(3, { ...call }));
    expect(childSeed(3, call)).not.toBe(childSeed(3, { ...call, occurrence: 2 }));
    expect(childSeed(3, call)).not.toBe(childSeed(4, call));
  });

  test("a schema no value satisfies is said so, not faked", async () => {
    const impossible = await valueForSchema({ type: "string", minLength: 5, maxLength: 2 }, 0);
    expect(impossible).toMatchObject({ ok: false, message: expect.stringMatching(/^The stub harness found no value that satisfies this outputSchema .*--replay/) });
  });

  test("a generated value a backtracking pattern never finishes checking is refused, naming the pattern, while the host keeps running", async () => {
    // The faker writes a string for the second pattern; the first backtracks for ever on it.
    const schema = { type: "object", properties: { s: { type: "string", allOf: [{ pattern: "^(a+)+$" }, { pattern: "^a{40}!$" }] } }, required: ["s"] };
    let beats = 0;
    const heartbeat = setInterval(() => beats++, 5);
    try {
      const stubbed = await valueForSchema(schema, 0);
      expect(beats).toBeGreaterThan(0);
      expect(stubbed).toMatchObject({ ok: false, message: expect.stringMatching(/^The stub harness found no value .*took longer than \d+ s at the pattern "\^\(a\+\)\+\$"/) });
    } finally {
      clearInterval(heartbeat);
    }
  });

  test("a schema that asks for a value too large to generate (a string of 10^8 characters) is refused, naming its pattern, while the host's event loop keeps turning", async () => {
    const schema = { type: "string", pattern: "^((a{1000}){1000}){100}$" };
    let settled = false;
    const pending = valueForSchema(schema, 0).finally(() => (settled = true));
    // The call returned at once and the loop turns: generating happens off the main thread.
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(await pending).toEqual({
      ok: false,
      message: expect.stringMatching(/^The stub harness found no value .*\(generating a value took longer than \d+ s and was stopped: the schema asks for a value too large to generate \(its patterns: "\^\(\(a\{1000\}\)\{1000\}\)\{100\}\$"\)/),
    });
  });

  test("a value that generates in time but is larger than the stub's cap is refused, saying its size and the cap", async () => {
    // A const is generated at once whatever its size, so the cap, not the time limit, is what refuses it (minItems: 1000000 is 4 MB in time, too).
    expect(await valueForSchema({ const: "x".repeat(2_000_000) }, 0)).toEqual({
      ok: false,
      message: expect.stringMatching(/^The stub harness found no value .*\(the generated value is 2\.0 MB of JSON, more than the stub harness's 1 MB: .*minLength, minItems/),
    });
    // Just under the cap is still a value.
    const under = await valueForSchema({ const: "x".repeat(999_000) }, 0);
    expect(under.ok && typeof under.value === "string" && under.value.length).toBe(999_000);
  });

  test("a child with no schema gets a text that names the call and says no model spoke", () => {
    expect(stubText({ agent: "role:explorer", description: "Summarize", occurrence: 2 })).toBe('[stub] role:explorer "Summarize" #2: no model was called.');
  });
});
