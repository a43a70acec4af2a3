import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as acorn from "acorn";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { takeSyntaxTree } from "../../runtime/parse.ts";
import { literalProblems } from "../../src/orchestrator/workflow/script-check.ts";
import { readCatalog } from "../../src/orchestrator/workflow/catalog.ts";
import { FlowError } from "../../src/contract/errors.ts";
import { SCRIPT_MAX_BYTES } from "../../src/runs/user-file.ts";
import { toChildCall } from "../../src/orchestrator/workflow/children.ts";
import { agentIdentity } from "../../src/orchestrator/workflow/call-identity.ts";
import { describeFailure } from "../../src/orchestrator/workflow/start.ts";
import {
  checkArgs,
  parseSelected,
  selectWorkflow,
  SHIPPED_WORKFLOWS_DIR,
  workflowDirs,
  type ArgsPassing,
  type WorkflowDirs,
} from "../../src/orchestrator/workflow/sources.ts";

/** How many times acorn parsed a script: a launch reads one tree for each of its checks and the run's guard. */
const parses = vi.hoisted(() => ({ count: 0 }));
vi.mock("acorn", async (importOriginal) => {
  const real = await importOriginal<typeof acorn>();
  const parse = ((...args: Parameters<typeof real.parse>) => {
    parses.count++;
    return real.parse(...args);
  }) as typeof real.parse;
  return { ...real, parse };
});

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof FlowError ? error.code : `not a FlowError: ${String(error)}`;
  }
};

let root: string;
let dirs: WorkflowDirs & { project: string };
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "pi-flow-sources-"));
  const trusted = workflowDirs(join(root, "project"), join(root, "home"), true);
  if (trusted.project === undefined) throw new Error("a trusted project has a workflows folder");
  dirs = { ...trusted, project: trusted.project };
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("selectWorkflow", () => {
  test("the folders are the project's .pi/flow/workflows, the Flow home's workflows, and the package's", () => {
    expect(dirs.project).toBe(join(root, "project", ".pi", "flow", "workflows"));
    expect(dirs.user).toBe(join(root, "home", "workflows"));
    expect(readdirSync(SHIPPED_WORKFLOWS_DIR).filter((file) => file.endsWith(".js")).sort()).toEqual(["handoff.js", "map.js", "parallel-edit.js", "review.js"]);
  });

  test("a name is a file stem: anything path-like is request_invalid and reads no file", () => {
    for (const name of ["../review", "a/b", ".hidden", "x\\y", ""]) {
      expect(codeOf(() => selectWorkflow({ workflow: name }, dirs))).toBe("request_invalid");
    }
  });

  test("project over user over shipped, by name", () => {
    expect(selectWorkflow({ workflow: "map" }, dirs)).toMatchObject({ name: "map", source: "shipped" });
    mkdirSync(dirs.user, { recursive: true });
    writeFileSync(join(dirs.user, "map.js"), "return 'user';");
    expect(selectWorkflow({ workflow: "map" }, dirs)).toMatchObject({ source: "user", text: "return 'user';" });
    mkdirSync(dirs.project, { recursive: true });
    writeFileSync(join(dirs.project, "map.js"), "return 'project';");
    expect(selectWorkflow({ workflow: "map" }, dirs)).toMatchObject({ source: "project", text: "return 'project';" });
  });

  test("a saved file that cannot be read is configuration_invalid", () => {
    mkdirSync(join(dirs.project, "broken.js"), { recursive: true }); // a directory where a file should be
    expect(codeOf(() => selectWorkflow({ workflow: "broken" }, dirs))).toBe("configuration_invalid");
  });

  test("a saved file that is a FIFO or over 1 MiB is configuration_invalid at once, never a hang or a whole read", () => {
    mkdirSync(dirs.project, { recursive: true });
    execFileSync("mkfifo", [join(dirs.project, "pipe.js")]);
    expect(() => selectWorkflow({ workflow: "pipe" }, dirs)).toThrow(/is a FIFO/);
    writeFileSync(join(dirs.project, "huge.js"), `return '${"x".repeat(SCRIPT_MAX_BYTES)}';`);
    expect(() => selectWorkflow({ workflow: "huge" }, dirs)).toThrow(/over 1 MiB/);
    expect(codeOf(() => selectWorkflow({ workflow: "huge" }, dirs))).toBe("configuration_invalid");
  });
});

describe("parsing and arguments", () => {
  test("every shipped workflow parses, with a name, description, args schema and limits", () => {
    for (const name of ["review", "map", "handoff", "parallel-edit"]) {
      const workflow = parseSelected(selectWorkflow({ workflow: name }, dirs));
      expect(workflow.meta).toMatchObject({ name, description: expect.any(String), args: { type: "object" }, limits: expect.any(Object) });
    }
  });

  test("an args schema that does not compile is script_invalid; no schema accepts any object", async () => {
    const bad = parseSelected({ name: "inline", source: "inline", label: "inline.js", text: 'export const meta = { args: { $ref: "#/definitions/missing" } };' });
    await expect(checkArgs(bad, {})).rejects.toMatchObject({ code: "script_invalid" });
    const free = parseSelected({ name: "inline", source: "inline", label: "inline.js", text: "return 1;" });
    expect(await checkArgs(free, { anything: 1 })).toEqual({ anything: 1 });
    expect(await checkArgs(free, undefined)).toEqual({});
  });

  test("an inline script's meta.args is checked as a JSON Schema in the schema worker, not on Pi's thread: the host walks none of it, and a bad one is still refused at launch, saying why and where", async () => {
    // Counted, not timed: the host's own count of schema nodes walked stays where it was.
    const { schemaSizeWalks } = await import("../../runtime/schema-check.ts");
    const inline = (args: unknown) =>
      parseSelected({ name: "inline", source: "inline", label: "inline.js", text: `// a model's script\nexport const meta = { args: ${JSON.stringify(args)} };\nreturn 1;` });
    const before = schemaSizeWalks.nodes;
    const files = { type: "object", properties: { file: { enum: Array.from({ length: 2_000 }, (_, index) => `src/file-${index}.ts`) } }, required: ["file"] };
    expect(await checkArgs(inline(files), { file: "src/file-7.ts" })).toEqual({ file: "src/file-7.ts" });
    const typo = inline({ type: "objekt" });
    await expect(checkArgs(typo, {})).rejects.toMatchObject({
      code: "script_invalid",
      message: "meta.args is not a usable JSON Schema: type must be equal to one of the allowed values (inline.js, line 2, column 1)",
    });
    await expect(checkArgs(inline({ allOf: [{ $ref: "#" }] }), {})).rejects.toMatchObject({ code: "script_invalid", message: expect.stringMatching(/^meta\.args is not a usable JSON Schema: at \/allOf\/0 it refers back to itself .* \(inline\.js, line 2, column 1\)$/) });
    const wide = { type: "object", properties: Object.fromEntries(Array.from({ length: 6_000 }, (_, index) => [`p${index}`, { type: "string" }])) };
    await expect(checkArgs(inline(wide), {})).rejects.toMatchObject({ code: "script_invalid", message: expect.stringMatching(/the most a schema may \(MAX_SCHEMA_OBJECTS\) \(inline\.js, line 2, column 1\)$/) });
    expect(schemaSizeWalks.nodes).toBe(before);
  });

  test("an inline script is parsed once for its launch, as a saved one is: its literal checks and its run's guard read that parse's tree (a 1 MiB script takes Pi's thread a third of a second a parse)", async () => {
    const text = `export const meta = {};\nawait agent({ role: "explorer", prompt: "p" });\nreturn 1;`;
    const before = parses.count;
    const workflow = parseSelected({ name: "inline", source: "inline", label: "inline.js", text });
    expect(await literalProblems(text, "inline.js", workflow, { roles: ["explorer"], agents: [], workflows: [] })).toEqual([]);
    expect(takeSyntaxTree(workflow)).toBeDefined();
    expect(parses.count - before).toBe(1);
  });

  test("the catalog (external_help's workflows, /flow workflows) parses on Pi's thread only a saved workflow whose file changed since it last listed it", () => {
    mkdirSync(dirs.project, { recursive: true });
    const write = (name: string, description: string) =>
      writeFileSync(join(dirs.project, `${name}.js`), `export const apiVersion = 1;\nexport const meta = { description: ${JSON.stringify(description)}, args: { type: "object" } };\nreturn 1;\n`);
    write("first", "One.");
    write("second", "Two.");
    const list = () => readCatalog(join(root, "project"), join(root, "home"), true).workflows;
    const shown = list();
    expect(shown.filter((workflow) => workflow.source === "project")).toEqual([
      { name: "first", source: "project", description: "One.", args: { type: "object" } },
      { name: "second", source: "project", description: "Two.", args: { type: "object" } },
    ]);
    let before = parses.count;
    expect(list()).toEqual(shown);
    expect(parses.count - before).toBe(0);
    write("second", "Two, changed.");
    before = parses.count;
    expect(list().find((workflow) => workflow.name === "second")?.description).toBe("Two, changed.");
    expect(parses.count - before).toBe(1);
  });

  test("args nested 10,000 levels deep (flow run --args reads them with JSON.parse, which does not overflow) are refused at valueDepth, not as a stack overflow", async () => {
    const free = parseSelected({ name: "inline", source: "inline", label: "inline.js", text: "return 1;" });
    const deep = JSON.parse(`{"deep":${"[".repeat(10_000)}${"]".repeat(10_000)}}`) as Record<string, unknown>;
    await expect(checkArgs(free, deep)).rejects.toMatchObject({ code: "request_invalid", message: "args nest deeper than 100 levels (the workflow's valueDepth limit); pass flatter args." });
  });

  test("a saved workflow's args pattern that backtracks for ever is checked off the main thread: script_invalid naming the pattern, and good args still pass", async () => {
    const text = 'export const meta = { args: { type: "object", properties: { slug: { type: "string", pattern: "^(a+)+$" } } } };\nexport const apiVersion = 1;\nexport default async function hostile() { return 1; }';
    const hostile = parseSelected({ name: "hostile", source: "project", label: "hostile.js", text });
    let settled = false;
    const pending = checkArgs(hostile, { slug: `${"a".repeat(40)}!` }, "hostile.js").finally(() => (settled = true));
    // The call returned and the loop turns while the pattern runs in the worker.
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    await expect(pending).rejects.toMatchObject({
      code: "script_invalid",
      message: expect.stringMatching(/^Checking args against meta\.args took longer than \d+ s at the pattern "\^\(a\+\)\+\$", so the check was stopped: .* \(hostile\.js, line 1, column 1\)$/),
    });
    expect(await checkArgs(hostile, { slug: "aaa" }, "hostile.js")).toEqual({ slug: "aaa" });
    await expect(checkArgs(hostile, { slug: "b" }, "hostile.js")).rejects.toMatchObject({ code: "request_invalid", message: expect.stringMatching(/^args\/slug: /) });
  });

  test("a misspelt argument names the one it is near, or the ones the schema knows, nested too", async () => {
    const review = parseSelected(selectWorkflow({ workflow: "review" }, dirs));
    await expect(checkArgs(review, { target: "x", lense: ["tests"] })).rejects.toThrow(/^args\/lense: unknown field \(did you mean lenses\?\)$/);
    await expect(checkArgs(review, { target: "x", verbose: true })).rejects.toThrow(/^args\/verbose: unknown field \(known: target, lenses\)$/);
    const edit = parseSelected(selectWorkflow({ workflow: "parallel-edit" }, dirs));
    await expect(checkArgs(edit, { edits: [{ path: "a", task: "b" }, { path: "a", task: "b", rol: "worker" }] })).rejects.toThrow(/^args\/edits\/1\/rol: unknown field \(known: path, task\)$/);
    await expect(checkArgs(edit, { edits: [{ path: "a", task: "b" }], rol: "worker" })).rejects.toThrow(/^args\/rol: unknown field \(did you mean role\?\)$/);
  });

  test("a schema with thousands of properties (4,000: MAX_SCHEMA_OBJECTS allows 5,000 objects) names the first twenty it knows, and the first twenty required ones missing, then how many more", async () => {
    const names = Array.from({ length: 4_000 }, (_, index) => `option_${index}`);
    const properties = Object.fromEntries(names.map((name) => [name, { type: "string" }]));
    const wide = (schema: Record<string, unknown>) =>
      parseSelected({ name: "inline", source: "inline", label: "inline.js", text: `export const meta = { args: ${JSON.stringify(schema)} };\nreturn 1;` });
    const closed = wide({ type: "object", properties, additionalProperties: false });
    await expect(checkArgs(closed, { zzzzzzzzzzzzzzzzzzzz: "x" })).rejects.toThrow(
      new RegExp(`^args/zzzzzzzzzzzzzzzzzzzz: unknown field \\(known: ${names.slice(0, 20).join(", ")} and 3980 more\\)$`),
    );
    const demanding = wide({ type: "object", properties, required: names });
    const pass: ArgsPassing = (example, count) => `give ${count} in args: ${example}`;
    await expect(checkArgs(demanding, {}, "inline.js", undefined, pass)).rejects.toThrow(
      new RegExp(`; give 4000 in args: \\{${names.slice(0, 20).map((name) => `"${name}": "…"`).join(", ")}, … and 3980 more\\}$`),
    );
  });
});

describe("agent() options", () => {
  test("are the same call external_delegate takes; the description defaults to the prompt", () => {
    const options = { role: "explorer", prompt: "Find the parsers.", context: { mode: "none" as const } };
    expect(toChildCall(options, agentIdentity(options, 2))).toEqual({
      role: "explorer",
      description: "agent 3: Find the parsers.",
      prompt: "Find the parsers.",
      context: { mode: "none" },
    });
  });

  test.each([
    [{ role: "explorer", prompt: "p", background: true }, /agent\(\) does not take background\./],
    [{ role: "explorer", prompt: "p", bogus: 1 }, /agent\(\) does not take bogus\./],
    // A misspelt option names the one it is near, as meta's keys do.
    [{ role: "explorer", prompt: "p", outputschema: {} }, /^agent\(\) does not take outputschema \(did you mean outputSchema\?\)\.$/],
    [{ role: "explorer", prompt: "p", contxt: { mode: "none" }, bogus: 1 }, /^agent\(\) does not take contxt \(did you mean context\?\), bogus\.$/],
    [{ role: "explorer", prompt: "" }, /agent\(\) option prompt: expected at least 1 characters\./],
    [{ role: 7, prompt: "p" }, /agent\(\) option role: expected string, got integer\./],
    [{ role: "explorer", prompt: "p", timeoutMs: 1.5 }, /agent\(\) option timeoutMs: expected integer/],
    // The same minimum as external_delegate's.
    [{ role: "explorer", prompt: "p", timeoutMs: 999 }, /agent\(\) option timeoutMs: expected >= 1000\./],
    [{ role: "explorer", prompt: "p", maxTurns: 0 }, /agent\(\) option maxTurns: expected >= 1\./],
    [{ role: "explorer", prompt: "p", outputSchema: [] }, /agent\(\) option outputSchema: expected object/],
    [{ role: "explorer", prompt: "p", context: { mode: "recent" } }, /agent\(\) option context/],
    [{ prompt: "p" }, /Give role or subagent_type\./],
    [{ role: "explorer", subagent_type: "general", prompt: "p" }, /not both/],
    [{ subagent_type: "general", harness: "claude", prompt: "p" }, /leave harness out/],
  ])("%j is request_invalid", (options, message) => {
    expect(() => toChildCall(options as never, agentIdentity(options as never, 0))).toThrow(message);
    expect(codeOf(() => toChildCall(options as never, agentIdentity(options as never, 0)))).toBe("request_invalid");
  });
});

test("an agent() call that names neither role nor subagent_type lists the project's roles, the first twenty of a project of many, then how many more", () => {
  const roles = Array.from({ length: 30 }, (_, index) => `role-${String(index).padStart(2, "0")}`);
  const options = { prompt: "p" };
  expect(() => toChildCall(options as never, agentIdentity(options as never, 0), () => roles)).toThrow(
    `Give role or subagent_type (roles here: ${roles.slice(0, 20).join(", ")}, … and 10 more).`,
  );
});

describe("describeFailure", () => {
  test("names the limit, the script position, or the host's code", () => {
    expect(describeFailure({ kind: "limit", code: "agentCalls", message: "agent call limit (2) reached" })).toBe(
      "agent call limit (2) reached (limit agentCalls)",
    );
    expect(describeFailure({ kind: "limit", code: "storeValueChars", message: "store value limit (100) reached", line: 2, column: 1 })).toBe(
      "store value limit (100) reached (limit storeValueChars) at line 2, column 1",
    );
    expect(describeFailure({ kind: "script", name: "TypeError", message: "x is null", line: 3, column: 7 })).toBe(
      "TypeError: x is null at line 3, column 7",
    );
    expect(describeFailure({ kind: "script", code: "selection_invalid", message: 'Unknown role "x".' })).toBe(
      'Unknown role "x". [selection_invalid]',
    );
  });
});
