import type * as acorn from "acorn";
import { join } from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { flowInProcess } from "./in-process.ts";
import { ECHO_EXTENSION, flowSandbox, PROJECT_ROOT } from "./support.ts";

/** How many times acorn parsed a script: flow check looks at one file's tree several ways, from one parse. */
const parses = vi.hoisted(() => ({ count: 0 }));
vi.mock("acorn", async (importOriginal) => {
  const real = await importOriginal<typeof acorn>();
  const parse = ((...args: Parameters<typeof real.parse>) => {
    parses.count++;
    return real.parse(...args);
  }) as typeof real.parse;
  return { ...real, parse };
});

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

const HEAD = "export const apiVersion = 1;\n";

test.each([
  ["a syntax error", `${HEAD}export const meta = {};\nconst x = ;\n`, 3, 11, "syntax error: Unexpected token"],
  ["a bad meta", `${HEAD}export const meta = { name: 5 };\nreturn 1;\n`, 2, 23, "`meta.name` must be a string"],
  ["an unknown meta key", `${HEAD}export const meta = { descripton: "x" };\nreturn 1;\n`, 2, 23, "unknown meta key `descripton`; did you mean `description`?"],
  ["a meta.name that is not the file's", `${HEAD}export const meta = { name: "other" };\nreturn 1;\n`, 2, 23, "`meta.name` is \"other\" but the file is problem-2-23.js"],
  ["meta that is not a literal", `${HEAD}const n = "x";\nexport const meta = { name: n };\n`, 3, 29, "`meta` must be a literal"],
  ["an unsupported apiVersion", "export const apiVersion = 2;\nexport const meta = {};\n", 1, 27, "unsupported apiVersion 2"],
  ["an unknown tool", `${HEAD}export const meta = {\n  tools: ["read", "no_such_tool"],\n};\nreturn 1;\n`, 3, 19, 'meta.tools names "no_such_tool", which is not a tool'],
  ["an args schema that is not JSON Schema", `${HEAD}export const meta = {\n  args: { type: "objekt" },\n};\nreturn 1;\n`, 3, 3, "`meta.args` is not a valid JSON Schema: type must be equal to one of the allowed values"],
  ["an args schema that cannot be compiled", `${HEAD}export const meta = {\n  args: { $ref: "#/definitions/missing" },\n};\nreturn 1;\n`, 3, 3, "meta.args is not a usable JSON Schema"],
  ["an args schema that refers to itself without end", `${HEAD}export const meta = {\n  args: { allOf: [{ $ref: "#" }] },\n};\nreturn 1;\n`, 3, 3, "meta.args is not a usable JSON Schema: at /allOf/0 it refers back to itself"],
  ["an unknown role named literally", `${HEAD}export const meta = {};\nawait agent({ role: "reveiwer", prompt: "x" });\n`, 3, 21, 'role: "reveiwer" is not a known role here (known: explorer, reviewer, worker)'],
  ["a child that names neither role nor subagent_type", `${HEAD}export const meta = {};\nawait agent({ prompt: "x" });\n`, 3, 13, "the child names neither role nor subagent_type: give one (roles here: explorer, reviewer, worker)"],
  ["an unknown agent definition named literally", `${HEAD}export const meta = { tools: ["external_delegate"] };\nawait tools.external_delegate({ subagent_type: \`scout\`, prompt: "x" });\n`, 3, 48, 'subagent_type: "scout" is not a known agent definition (subagent_type) here (none found)'],
  ["an unknown saved workflow named literally", `${HEAD}export const meta = { tools: ["external_workflow"] };\nawait tools.external_workflow({ workflow: "reveiw" });\n`, 3, 43, 'workflow: "reveiw" is not a known saved workflow here (known: handoff, map, parallel-edit, review)'],
  ["a tool call meta.tools does not name", `${HEAD}export const meta = {};\nawait tools.external_delegate({ role: "explorer", prompt: "x" });\n`, 3, 13, 'tools.external_delegate is not available to this workflow: name "external_delegate" in meta.tools (available now: external_help, external_runs)'],
  ["a misspelt tool call", `${HEAD}export const meta = { tools: ["external_delegate"] };\nawait tools.external_delegat({ role: "explorer", prompt: "x" });\n`, 3, 13, "tools.external_delegat is not available to this workflow; did you mean tools.external_delegate?"],
  ["a misspelt tool call meta.tools does not name", `${HEAD}export const meta = {};\nawait tools.external_delegat({ role: "explorer", prompt: "x" });\n`, 3, 13, 'tools.external_delegat is not available to this workflow; did you mean tools.external_delegate? Name "external_delegate" in meta.tools'],
  ["an agent() outputSchema that is not JSON Schema", `${HEAD}export const meta = {};\nawait agent({ role: "explorer", prompt: "x", outputSchema: { type: "strin" } });\n`, 3, 60, "agent() outputSchema is not a usable JSON Schema: type must be equal to one of the allowed values"],
  ["an agent() outputSchema that cannot be compiled", `${HEAD}export const meta = {};\nawait agent({ role: "explorer", prompt: "x",\n  outputSchema: { $ref: "#/definitions/nope" } });\n`, 4, 17, "agent() outputSchema is not a usable JSON Schema"],
  ["a misspelt agent() option", `${HEAD}export const meta = {};\nawait agent({ role: "explorer", prompt: "x", outputschema: {} });\n`, 3, 46, "agent() does not take outputschema (did you mean outputSchema?)"],
])("%s is reported as file:line:column: message, exit 2", async (_name, source, line, column, message) => {
  const file = sandbox.file(`problem-${line}-${column}.js`, source);
  const result = await flowInProcess(["check", file], { env: sandbox.env });
  expect(result.code).toBe(2);
  const [first, ...rest] = result.stdout.trimEnd().split("\n");
  // A syntax error quotes its line, with a caret under the column (the quote's own test is below).
  expect(rest).toEqual(message.startsWith("syntax error") ? [expect.stringMatching(/^ {4}\S/), expect.stringMatching(/^ +\^$/)] : []);
  expect(first).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:${line}:${column}: `));
  expect(first).toContain(message);
  expect(result.stderr).toBe("flow check: 1 problem\n");
});

test("a syntax error quotes its line under the message, cut around the column, a caret under it, a secret on it redacted", async () => {
  const short = sandbox.file("short.js", `${HEAD}export const meta = {};\nconst x = { a: 1 b: 2 };\n`);
  const shown = await flowInProcess(["check", short], { env: sandbox.env });
  expect(shown.stdout.trimEnd().split("\n")).toEqual([`${short}:3:18: syntax error: Unexpected token`, "    const x = { a: 1 b: 2 };", "                     ^"]);

  const long = sandbox.file("long.js", `${HEAD}export const meta = {};\nconst x = [${"1, ".repeat(100)}2 3];\n`);
  const [, line, caret] = (await flowInProcess(["check", long], { env: sandbox.env })).stdout.trimEnd().split("\n");
  expect(line).toMatch(/^ {4}…[1, ]+2 3\];$/);
  expect(line!.length).toBeLessThanOrEqual(4 + 1 + 100);
  expect(line![caret!.length - 1]).toBe("3"); // the caret is under the token the parser stopped at

  const key = `sk-ant-api03-${"Q".repeat(40)}`;
  const secret = sandbox.file("secret.js", `${HEAD}export const meta = {};\nconst key = "${key}" +;\n`);
  const redacted = await flowInProcess(["check", secret], { env: sandbox.env });
  expect(redacted.stdout).not.toContain("QQQQ");
  expect(redacted.stdout.trimEnd().split("\n").slice(1)).toEqual([expect.stringMatching(/^ {4}const key = "?\[REDACTED\]"? \+;$/), expect.stringMatching(/^ +\^$/)]);
  const [, quoted, under] = redacted.stdout.trimEnd().split("\n");
  expect(quoted![under!.length - 1]).toBe(";");
});

test("a problem quoting what the file wrote prints no escape sequence of it to the terminal: an OSC 52 in a meta key would write the clipboard, a CSI in a role name clear the screen", async () => {
  const file = sandbox.file("escapes.js", `${HEAD}export const meta = { "\\u001b]52;c;ZWNobyBwd25lZA==\\u0007desc": "x" };\nreturn 1;\n`);
  const shown = await flowInProcess(["check", file], { env: sandbox.env });
  expect(shown.stdout).toBe(`${file}:2:23: unknown meta key \`desc\` (meta takes name, description, args, limits, tools)\n`);
  const role = sandbox.file("role-escapes.js", `${HEAD}export const meta = {};\nawait agent({ role: "\\u001b[2J\\u001b[31mreviewr", prompt: "x" });\n`);
  const cleared = await flowInProcess(["check", role], { env: sandbox.env });
  expect(cleared.stdout).not.toMatch(/\u001b/);
  expect(cleared.stdout).toContain(': role: "reviewr" is not a known role here');
});

test("a script's own `tools` or `agent` binding is its own: its calls are not checked as the globals'", async () => {
  const file = sandbox.file("shadow.js", `${HEAD}export const meta = {};\nconst tools = { mine: () => 1 };\nfunction run(agent) { return agent({ anything: 1 }); }\nreturn [tools.mine(), run((options) => options)];\n`);
  const result = await flowInProcess(["check", file], { env: sandbox.env });
  expect([result.code, result.stdout]).toEqual([0, ""]);
});

test("the shipped workflows pass; several files report every problem, each with its own position", async () => {
  const shipped = ["review", "map", "handoff", "parallel-edit"].map((name) => join(PROJECT_ROOT, "workflows", `${name}.js`));
  const good = await flowInProcess(["check", ...shipped], { env: sandbox.env });
  expect([good.code, good.stdout, good.stderr]).toEqual([0, "", "flow check: 4 files ok\n"]);

  const bad1 = sandbox.file("bad1.js", `${HEAD}export const meta = {};\nawait agent(;\n`);
  const bad2 = sandbox.file("bad2.js", "return 1;\n");
  const both = await flowInProcess(["check", bad1, ...shipped, bad2], { env: sandbox.env });
  expect(both.code).toBe(2);
  expect(both.stdout.trimEnd().split("\n")).toEqual([
    `${bad1}:3:13: syntax error: Unexpected token`,
    "    await agent(;",
    "                ^",
    `${bad2}:1:1: a saved workflow must declare \`export const apiVersion = 1\``,
  ]);
});

test("tools are those a run would have: a tool an --extension registers is callable", async () => {
  const file = sandbox.file("uses-tool.js", `${HEAD}export const meta = { tools: ["read", "flow_test_echo"] };\nreturn 1;\n`);
  const without = await flowInProcess(["check", file], { env: sandbox.env });
  expect(without.code).toBe(2);
  expect(without.stdout).toContain(`${file}:2:39: meta.tools names "flow_test_echo", which is not a tool`);
  const withExtension = await flowInProcess(["check", file, "--extension", ECHO_EXTENSION], { env: sandbox.env });
  expect([withExtension.code, withExtension.stdout]).toEqual([0, ""]);
});

test("a file is parsed once, however many looks flow check takes at it (meta, its problems' places, the names it calls)", async () => {
  const file = sandbox.file("parsed-once.js", `${HEAD}export const meta = { description: "Once" };\nawait agent({ role: "reveiwer", prompt: "x" });\nawait agent({ subagent_type: "scout", prompt: "y" });\n`);
  parses.count = 0;
  const result = await flowInProcess(["check", file], { env: sandbox.env });
  expect(result.stdout.trimEnd().split("\n")).toHaveLength(2);
  expect(result.code).toBe(2);
  expect(parses.count).toBe(1);
});
