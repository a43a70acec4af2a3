import { describe, expect, it } from "vitest";
import { parseWorkflow, WorkflowScriptError } from "../../runtime/index.ts";

const saved = `export const apiVersion = 1;
export const meta = {
  name: "review",
  description: "Independent reviewers, then a synthesis.",
  args: { type: "object", properties: { target: { type: "string" } }, required: ["target"] },
  limits: { agentCalls: 8, concurrency: 3 },
  tools: ["external_runs"],
};
return args.target;
`;

function invalid(source: string, origin: "saved" | "inline" = "inline"): WorkflowScriptError {
  try {
    parseWorkflow(source, { origin, path: "wf.js" });
  } catch (error) {
    expect(error).toBeInstanceOf(WorkflowScriptError);
    expect((error as WorkflowScriptError).code).toBe("script_invalid");
    return error as WorkflowScriptError;
  }
  throw new Error("expected script_invalid");
}

describe("parseWorkflow", () => {
  it("reads apiVersion and meta of a saved workflow as literal JSON", () => {
    const parsed = parseWorkflow(saved, { origin: "saved", path: "workflows/review.js" });
    expect(parsed.apiVersion).toBe(1);
    expect(parsed.meta).toEqual({
      name: "review",
      description: "Independent reviewers, then a synthesis.",
      args: { type: "object", properties: { target: { type: "string" } }, required: ["target"] },
      limits: { agentCalls: 8, concurrency: 3 },
      tools: ["external_runs"],
    });
    expect(parsed.path).toBe("workflows/review.js");
  });

  it("keeps every line and column of the body, blanking only `export`", () => {
    const parsed = parseWorkflow(saved, { origin: "saved" });
    expect(parsed.body.split("\n").length).toBe(saved.split("\n").length);
    expect(parsed.body.startsWith("       const apiVersion = 1;")).toBe(true);
    expect(parsed.body.indexOf("return args.target")).toBe(saved.indexOf("return args.target"));
  });

  it("lets inline scripts omit apiVersion and meta", () => {
    const parsed = parseWorkflow("return 1 + await Promise.resolve(1);", { origin: "inline" });
    expect(parsed).toMatchObject({ apiVersion: 1, meta: {}, origin: "inline" });
  });

  it("requires both declarations in saved files", () => {
    expect(invalid("export const meta = {};\nreturn 1;", "saved").message).toMatch(/apiVersion/);
    expect(invalid("export const apiVersion = 1;\nreturn 1;", "saved").message).toMatch(/meta/);
  });

  it("rejects an unsupported apiVersion at its position", () => {
    const error = invalid("export const apiVersion = 2;");
    expect(error.message).toMatch(/unsupported apiVersion 2/);
    expect([error.line, error.column]).toEqual([1, 27]);
    expect(invalid('export const apiVersion = "1";').message).toMatch(/unsupported apiVersion "1"/);
  });

  it("reports syntax errors with 1-based line and column", () => {
    const error = invalid("const a = 1;\nconst b = ;\n");
    expect(error.message).toMatch(/^syntax error: Unexpected token/);
    expect([error.line, error.column]).toEqual([2, 11]);
  });

  it("says a script that ends with a {, ( or [ open ends too soon, instead of an unexpected token on an empty line", () => {
    const error = invalid("if (ready) {\n  await agent({ role: \"explorer\", prompt: \"p\" });\n\n");
    expect(error.message).toBe("syntax error: Unexpected end of script: a {, ( or [ opened before it is not closed");
    expect(error.lineText).toBeUndefined();
    expect(invalid("const x = [1, 2;\n").message).toMatch(/^syntax error: Unexpected token/);
  });

  it.each([
    ["import fs from 'node:fs';", /imports are not allowed/],
    ["const m = await import('node:fs');", /import\(\) is not allowed/],
    ["const u = import.meta.url;", /import.meta is not allowed/],
    ["export default 1;", /`export default` must be the workflow's function/],
    ["export function f() {}", /only `export const apiVersion`/],
    ["export const other = 1;", /only `export const apiVersion`/],
    ["const x = 1; export { x };", /only `export const apiVersion`/],
    ["export * from 'x';", /only `export const apiVersion`/],
    ["export let meta = {};", /single `const`/],
  ])("rejects %s", (source, message) => {
    expect(invalid(source).message).toMatch(message);
  });

  it.each([
    ["export const meta = makeMeta();", /not call expression/],
    ["const n = 'x'; export const meta = { name: n };", /not identifier/],
    ["export const meta = { name: `a${1}` };", /substitutions/],
    ["export const meta = { ...base };", /spread/],
    ["export const meta = { ['name']: 'x' };", /plain `key: value`/],
    ["export const meta = { get name() { return 'x'; } };", /plain `key: value`/],
    ["export const meta = { pattern: /x/ };", /regular expressions/],
    ["export const meta = { __proto__: { polluted: true } };", /__proto__/],
    ["export const meta = [1];", /object literal/],
  ])("rejects non-literal meta %s", (source, message) => {
    const error = invalid(source);
    expect(error.message).toMatch(message);
    expect(error.line).toBe(1);
  });

  it("refuses a key written twice in meta, at any depth: the reader of the first would not see that the second wins", () => {
    // A grant hidden below a long meta: whoever reviews the first `tools` reads a workflow that cannot write.
    const hidden = invalid(`export const meta = {\n  tools: ["external_runs"],\n  description: "Reads.",\n  tools: ["bash", "write"],\n};\nreturn 1;`);
    expect(hidden.message).toBe("`meta` writes the key \"tools\" twice: JavaScript would keep only the last; write it once");
    expect([hidden.line, hidden.column]).toEqual([4, 3]);
    expect(invalid(`export const meta = { args: { type: "object", properties: { a: { type: "string" }, a: { type: "number" } } } };`).message).toMatch(/^`meta` writes the key "a" twice/);
    expect(invalid(`export const meta = { description: "a", "description": "b" };`).message).toMatch(/"description" twice/);
  });

  it("quotes a long key, name or apiVersion it refuses cut short: a 300,000-character key went into the message whole, into the model's context", () => {
    const long = "k".repeat(300_000);
    const cut = /k{99}… \[2999\d\d more characters cut\]/;
    for (const source of [
      `export const meta = { "${long}": 1 };`,
      `export const meta = { limits: { "${long}": 1 } };`,
      `export const apiVersion = "${long}";`,
    ]) {
      const message = invalid(source).message;
      expect(message).toMatch(cut);
      expect(message.length).toBeLessThan(500);
    }
    const named = invalid(`export const apiVersion = 1;\nexport const meta = { name: "${long}" };`, "saved").message;
    expect(named).toMatch(/^`meta.name` is "k{100}… \[299900 more characters cut\]" but the file is wf\.js/);
    expect(named.length).toBeLessThan(500);
  });

  it("checks meta fields and limits against their ceilings", () => {
    expect(invalid("export const meta = { name: 3 };").message).toMatch(/meta.name/);
    expect(invalid("export const meta = { tools: [1] };").message).toMatch(/meta.tools/);
    expect(invalid("export const meta = { limits: { agentCalls: 100000 } };").message).toMatch(/agentCalls \(100000\) exceeds its ceiling/);
    expect(invalid("export const meta = { limits: { bogus: 1 } };").message).toMatch(/unknown limit "bogus"/);
  });

  it("accepts negative numbers and plain templates as literals", () => {
    const parsed = parseWorkflow("export const meta = { args: { type: 'number', minimum: -2 }, description: `plain` };", { origin: "inline" });
    expect(parsed.meta).toEqual({ args: { type: "number", minimum: -2 }, description: "plain" });
  });
});

describe("strict meta", () => {
  const problem = (source: string, options: { origin: "saved" | "inline"; path?: string } = { origin: "inline" }) => {
    try {
      parseWorkflow(source, options);
    } catch (error) {
      const { message, line, column } = error as WorkflowScriptError;
      return { message, line, column };
    }
    throw new Error("expected a script_invalid error");
  };

  it.each([
    ["limit", "limits"],
    ["descripton", "description"],
    ["Tools", "tools"],
  ])("an unknown key %s is script_invalid at that key, suggesting %s", (key, near) => {
    expect(problem(`export const meta = {\n  name: "x",\n  ${key}: {},\n};\nreturn 1;`)).toEqual({
      message: `unknown meta key \`${key}\`; did you mean \`${near}\`? (meta takes name, description, args, limits, tools)`,
      line: 3,
      column: 3,
    });
  });

  it("an unknown key far from any known one gets no suggestion", () => {
    expect(problem(`export const meta = { colour: "red" };`).message).toBe("unknown meta key `colour` (meta takes name, description, args, limits, tools)");
  });

  it.each([
    [`{ type: "objekt" }`, "type must be equal to one of the allowed values"],
    [`{ type: "object", required: "target" }`, "required must be array"],
    [`{ type: "object", properties: { n: { type: "integer", minimum: "1" } } }`, "properties.n.minimum must be number"],
    // Properties named as data keywords are schemas, checked as such; a data keyword's value is not.
    [`{ properties: { const: { type: "objekt" } }, const: { type: "objekt" } }`, "properties.const.type must be equal to one of the allowed values"],
    [`{ definitions: { enum: { enum: "a" } }, default: { enum: "a" } }`, "definitions.enum.enum must be array"],
    [`{ examples: { type: "x" } }`, "examples must be array"],
  ])("meta.args %s is script_invalid at meta.args, before any caller is blamed", (schema, reason) => {
    expect(problem(`export const meta = {\n  args: ${schema},\n};`)).toEqual({
      message: `\`meta.args\` is not a valid JSON Schema: ${reason}`,
      line: 2,
      column: 3,
    });
  });

  it("meta.args nested past MAX_SCHEMA_DEPTH, or holding more than MAX_SCHEMA_OBJECTS objects, is script_invalid naming the limit, and one just under each is accepted", () => {
    const nested = (levels: number) => `${"{ not: ".repeat(levels - 1)}{}${" }".repeat(levels - 1)}`;
    const properties = (count: number) => `{ properties: { ${Array.from({ length: count }, (_, index) => `p${index}: {}`).join(", ")} } }`;
    expect(problem(`export const meta = {\n  args: ${nested(257)},\n};`)).toEqual({
      message: "`meta.args` is not a valid JSON Schema: it nests objects and arrays more than 256 levels deep, the most a schema may (MAX_SCHEMA_DEPTH)",
      line: 2,
      column: 3,
    });
    expect(problem(`export const meta = { args: ${properties(5_000)} };`).message).toBe(
      "`meta.args` is not a valid JSON Schema: it holds more than 5000 objects and arrays outside enum, const, default and examples, the most a schema may (MAX_SCHEMA_OBJECTS)",
    );
    for (const fits of [nested(256), properties(4_998)]) expect(parseWorkflow(`export const meta = { args: ${fits} };\nreturn 1;`, { origin: "inline" }).meta.args).toBeDefined();
  });

  it("a saved workflow's meta.name must be its file name; an inline script may name itself", () => {
    const source = `export const apiVersion = 1;\nexport const meta = { name: "reveiw" };\nreturn 1;`;
    expect(problem(source, { origin: "saved", path: "/w/review.js" })).toEqual({
      message: '`meta.name` is "reveiw" but the file is review.js: a saved workflow is called by its file name; write `name: \"review\"` or leave `name` out, or rename the file reveiw.js',
      line: 2,
      column: 23,
    });
    expect(parseWorkflow(source, { origin: "inline" }).meta.name).toBe("reveiw");
    // A name no file could have is not offered as one.
    const spaced = `export const apiVersion = 1;\nexport const meta = { name: "my review" };\nreturn 1;`;
    expect(problem(spaced, { origin: "saved", path: "/w/review.js" })?.message).toMatch(/; write `name: "review"` or leave `name` out$/);
  });
});

describe("meta.args with a long enum", () => {
  const problemOf = async (schema: unknown) => (await import("../../runtime/schema-check.ts")).jsonSchemaProblem(schema);

  it("a script whose array literal holds 200,000 elements (400 KB, under the 1 MiB a script may be), in meta.args' enum or in its body, is parsed, not refused with a stack overflow", () => {
    // Each array of the tree was spread into one push() call: past about 120,000 elements, "Maximum call stack size exceeded".
    const zeros = Array.from({ length: 200_000 }, () => "0").join(",");
    expect(() => parseWorkflow(`const xs = [${zeros}];\nreturn xs.length;\n`, { origin: "inline", path: "big.js" })).not.toThrow();
    expect(invalid(`export const meta = { args: { enum: [${zeros}] } };\nreturn 1;\n`).message).toMatch(/^`meta.args` is not a valid JSON Schema: enum must NOT have duplicate items/);
  });

  it("an enum of 200,000 values is checked without comparing every pair (which would take minutes: 40,000 took Ajv 20 s); a duplicate among them is still named at its path", async () => {
    const values = Array.from({ length: 200_000 }, (_, index) => `src/file-${index}.ts`);
    expect(await problemOf({ type: "object", properties: { file: { enum: values } } })).toBeUndefined();
    expect(await problemOf({ type: "object", properties: { file: { enum: [...values, "src/file-5.ts"] } } })).toMatch(/^properties\.file\.enum must NOT have duplicate items/);
    expect(await problemOf({ enum: [...Array.from({ length: 100 }, (_, index) => ({ k: index })), { k: 7 }] })).toMatch(/^enum must NOT have duplicate items/);
    expect(await problemOf({ enum: [] })).toMatch(/^enum must NOT have fewer than 1 items/);
  });

  it("a long enum's objects are the same value whatever the order of their keys, as JSON Schema compares them (and as a short enum's are)", async () => {
    const pairs = (length: number) => Array.from({ length }, (_, index) => ({ a: index, b: { c: index, d: [index, { e: 1, f: 2 }] } }));
    const swapped = { b: { d: [7, { f: 2, e: 1 }], c: 7 }, a: 7 };
    expect(await problemOf({ enum: [...pairs(10), swapped] })).toMatch(/^enum must NOT have duplicate items/);
    expect(await problemOf({ enum: [...pairs(100), swapped] })).toMatch(/^enum must NOT have duplicate items/);
    // Arrays keep their order: [1, 2] and [2, 1] are two values.
    expect(await problemOf({ enum: [...Array.from({ length: 100 }, (_, index) => [index, index + 1]), [2, 1]] })).toBeUndefined();
  });
});
