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

test("a $ref to a URL or a file, in a schema or in its data, is never fetched or read: its type is unknown", async () => {
  const { createServer } = await import("node:http");
  const { mkdtempSync, rmSync, writeFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const requested: string[] = [];
  const server = createServer((request, response) => {
    requested.push(request.url ?? "");
    response.end(JSON.stringify({ type: "object", properties: { FETCHED_NAME: { type: "string" } } }));
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/schema.json`;
  const folder = mkdtempSync(join(tmpdir(), "pi-flow-ref-"));
  const file = join(folder, "secret.json");
  writeFileSync(file, JSON.stringify({ type: "object", properties: { FILE_NAME: { type: "string" } } }));
  try {
    const schema = {
      type: "object",
      properties: { remote: { $ref: url }, local: { $ref: file }, relative: { $ref: "secret.json" }, inside: { $ref: "#/$defs/a" }, data: { const: { $ref: url } } },
      required: ["remote", "local", "relative", "inside"],
      $defs: { a: { type: "string" } },
    };
    const declaration = await schemaToType(schema, "Input", { closed: true });
    expect(requested).toEqual([]);
    expect(declaration).not.toMatch(/FETCHED_NAME|FILE_NAME/);
    // The schema's own $ref still names its type; the const's value is data, rendered as it is.
    expect(declaration).toMatch(/remote: unknown;\s+local: unknown;\s+relative: unknown;\s+inside: A;\s+data\?: \{\$ref: "http:[^"]+"\};/);
    expect(declaration).toContain("type A = string;");
  } finally {
    server.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

test("a schema's $id, tsType and $anchor references do not rename its type, write TypeScript into the declarations, or fail them", async () => {
  // A saved workflow's meta.args, a tool's schema: `WorkflowInput<"review">` names ReviewWorkflowArgs, whatever $id says.
  expect(await schemaToType({ $id: "https://example.com/other", type: "object", properties: { a: { $ref: "#" } } }, "ReviewWorkflowArgs", { closed: true })).toMatch(
    /^interface ReviewWorkflowArgs \{\s+a\?: ReviewWorkflowArgs;\s+\}$/,
  );
  const injected = await schemaToType({ type: "object", properties: { a: { type: "string", tsType: "never; } declare const agent: any; interface Y {" } } }, "Input", { closed: true });
  expect(injected).not.toContain("declare");
  expect(injected).toMatch(/a\?: string;/);
  // An $anchor is a JSON Schema reference the compiler's resolver cannot follow ("Refs should have been resolved by the resolver!").
  expect(await schemaToType({ type: "object", properties: { a: { $anchor: "A", type: "string" }, b: { $ref: "#A" } } }, "Input", { closed: true })).toMatch(/a\?: string;\s+b\?: unknown;/);
});

test("a tool or saved workflow whose schema the compiler cannot render (a dangling $ref, a boolean schema) is declared untyped, saying why, and the others are still typed", async () => {
  const { describeToolText } = await import("../../runtime/schema-types.ts");
  const { generateDeclarations } = await import("../../runtime/declarations.ts");
  // An MCP server's tool with a $ref to nothing (Pi calls it: its validator rejects only values there), and one whose output is `true`.
  const text = await describeToolText("mcp_lookup", { description: "Looks things up", input: { type: "object", properties: { id: { $ref: "#/$defs/missing" } } }, output: true });
  expect(text).toMatch(/Not typed: its JSON Schema could not be rendered \(Missing \$ref pointer/);
  expect(text).toMatch(/type McpLookupInput = \{\s*\[key: string\]: unknown;?\s*\};/);
  expect(text).toMatch(/type McpLookupOutput = unknown;/);
  const declarations = await generateDeclarations({
    toolSchemas: { mcp_lookup: { input: { type: "object", properties: { id: { $ref: "#/$defs/missing" } } } }, echo: { input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } } },
    workflows: { loops: { type: "object", properties: { a: { $ref: "#/properties/a" } } } },
  });
  expect(declarations).toMatch(/interface EchoInput \{\s+text: string;\s+\}/);
  expect(declarations).toMatch(/type LoopsWorkflowArgs = \{/);
});
