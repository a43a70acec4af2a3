import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { WORKFLOW_HELPERS } from "../../helpers/index.ts";
import { DEFAULT_LIMITS, LIMIT_CEILINGS, LIMIT_NAMES } from "../../runtime/index.ts";
import { TOOL_NAMES } from "../../src/contract/envelope.ts";
import { ERROR_CODE_LIST } from "../../src/contract/errors.ts";
import { STUBBED } from "../../src/harnesses/stub.ts";
import { TOOLS_WITHHELD } from "../../src/orchestrator/child/index.ts";
import { HANDLED_CHILD_FAILURES } from "../../src/orchestrator/workflow/index.ts";
import { MAX_CHILD_TIMEOUT_MS } from "../../src/orchestrator/child/prepare-child.ts";
import { MAX_STEER_CHARS } from "../../src/orchestrator/child/steer-targets.ts";
import { MAX_WAIT_TARGETS } from "../../src/orchestrator/session/wait.ts";
import { DEFAULT_LIST_LIMIT, MAX_BATCH_TARGETS, MAX_LIST_LIMIT, MAX_PAGE_BYTES } from "../../src/runs/index.ts";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import { CONTRACT_INDEX_MAX_BYTES } from "../../src/help/answer.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { schemaViolation } from "../support/schema.ts";

type Envelope = { ok: boolean; data: Record<string, unknown> | null; error?: { code: string; message: string } };

let pi: PiTestSession;
let api: ExtensionAPI | undefined;

beforeAll(async () => {
  pi = await startPiSession({ extensions: [(extensionApi) => void (api = extensionApi)] });
});
afterAll(() => pi.dispose());

const registeredNow = () => new Set(api!.getAllTools().map((tool) => tool.name));
const helpOutput = TOOL_SCHEMAS.external_help.output;

describe("external_help called directly by the model", () => {
  test("topic contracts returns a compact index of the four tools with their registration", async () => {
    const result = await pi.callTool("external_help", { topic: "contracts" });
    const envelope = result.structuredContent as Envelope;
    expect(result.isError).toBe(false);
    expect(schemaViolation(helpOutput, envelope)).toBeNull();
    const index = envelope.data!.index as { tools: { name: string; registered: boolean }[]; rules: string[]; more: string };
    expect(Buffer.byteLength(JSON.stringify(index), "utf8")).toBeLessThanOrEqual(CONTRACT_INDEX_MAX_BYTES);
    const registered = registeredNow();
    expect(index.tools.map((tool) => tool.name)).toEqual([...TOOL_NAMES]);
    for (const tool of index.tools) expect(tool.registered).toBe(registered.has(tool.name));
    expect(index.tools.find((tool) => tool.name === "external_help")?.registered).toBe(true);
    expect(index.more).toContain("describeTool");
    expect(index.rules.some((rule) => rule.includes("isError === !ok"))).toBe(true);
    // The model reads the same index as text.
    expect(JSON.parse(result.text)).toEqual(index);
  });

  test.each(TOOL_NAMES)("topic contracts with tool %s returns its contract, schemas taken from the registered definitions", async (tool) => {
    const result = await pi.callTool("external_help", { topic: "contracts", tool });
    const envelope = result.structuredContent as Envelope;
    expect(result.isError).toBe(false);
    expect(schemaViolation(helpOutput, envelope)).toBeNull();
    const contract = envelope.data!.contract as Record<string, unknown>;
    expect(envelope.data).toMatchObject({ topic: "contracts", tool });
    expect(contract).toMatchObject({ tool, contractVersion: 1, registered: registeredNow().has(tool) });
    // Inside Pi the package's TypeBox is Pi's own, so compare with what Pi registered, not with this process's copy.
    const definition = pi.session.getToolDefinition(tool);
    if (definition) {
      expect(contract.input).toEqual(JSON.parse(JSON.stringify(definition.parameters)));
      expect(contract.output).toEqual(JSON.parse(JSON.stringify(definition.outputSchema)));
    } else {
      // Not registered yet in this session: still the contract's schema, with the same shape.
      const keys = (schema: unknown) => Object.keys(schema as object).sort();
      expect(keys(contract.input)).toEqual(keys(TOOL_SCHEMAS[tool].input));
      expect(keys(contract.output)).toEqual(keys(TOOL_SCHEMAS[tool].output));
    }
    for (const key of ["actions", "purpose", "semantics", "examples"]) expect(contract[key]).toBeDefined();
    for (const example of contract.examples as { input: unknown }[]) {
      expect(schemaViolation(TOOL_SCHEMAS[tool].input, example.input)).toBeNull();
    }
  });

  test("external_runs examples, copied as served, reach their action: an unknown run is run_unavailable, never a malformed ID", async () => {
    const result = await pi.callTool("external_help", { topic: "contracts", tool: "external_runs" });
    const examples = ((result.structuredContent as Envelope).data!.contract as { examples: { title: string; input: Record<string, unknown> }[] }).examples;
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      const call = await pi.callTool("external_runs", example.input);
      const envelope = call.structuredContent as Envelope;
      // A list succeeds; every other example names runs this session never had.
      const outcome = envelope.ok ? "ok" : envelope.error!.code;
      expect([example.title, outcome]).toEqual([example.title, example.input.action === "list" ? "ok" : "run_unavailable"]);
    }
  });

  test("the external_workflow contract carries the workflow helpers' signatures", async () => {
    const result = await pi.callTool("external_help", { topic: "contracts", tool: "external_workflow" });
    const contract = (result.structuredContent as Envelope).data!.contract as { helpers: typeof WORKFLOW_HELPERS };
    expect(contract.helpers.functions.map((helper) => helper.name)).toEqual(WORKFLOW_HELPERS.functions.map((helper) => helper.name));
    expect(contract.helpers.functions.map((helper) => helper.name)).toEqual(expect.arrayContaining(["parallel", "retry", "readFinal", "handoff"]));
    expect(contract.helpers.globals.map((global) => global.name)).toEqual(expect.arrayContaining(["agent", "store", "load"]));
    expect(contract.helpers.agentOptions).toMatchObject({ type: "object" });
  });

  test("the workflows topic lists every saved workflow here with its source, description and argument schema", async () => {
    const projectDir = join(pi.cwd, ".pi", "flow", "workflows");
    mkdirSync(projectDir, { recursive: true });
    writeFileSync(join(projectDir, "triage.js"), `export const apiVersion = 1;\nexport const meta = { name: "triage", description: "Sort the issues.", args: { type: "object", properties: { label: { type: "string" } } } };\nreturn 1;\n`);
    writeFileSync(join(projectDir, "broken.js"), `export const apiVersion = 1;\nexport const meta = { limit: {} };\nreturn 1;\n`);
    const result = await pi.callTool("external_help", { topic: "workflows" });
    const data = (result.structuredContent as Envelope).data as { workflows: Array<Record<string, unknown>> };
    expect(data.workflows.map((workflow) => `${workflow.name}:${workflow.source}`)).toEqual([
      "broken:project",
      "handoff:shipped",
      "map:shipped",
      "parallel-edit:shipped",
      "review:shipped",
      "triage:project",
    ]);
    expect(data.workflows.find((workflow) => workflow.name === "triage")).toEqual({
      name: "triage",
      source: "project",
      description: "Sort the issues.",
      args: { type: "object", properties: { label: { type: "string" } } },
    });
    expect(data.workflows.find((workflow) => workflow.name === "review")?.args).toMatchObject({ required: ["target"] });
    expect(result.text).toContain('- triage (project): Sort the issues. args: {"type":"object","properties":{"label":{"type":"string"}}}');
    expect(result.text).toMatch(/- broken \(project\): cannot run: unknown meta key `limit`; did you mean `limits`\?/);
  });

  test("the workflows topic's text stays short with a project of many saved workflows and a huge args schema: the structured answer keeps them whole", async () => {
    const projectDir = join(pi.cwd, ".pi", "flow", "workflows");
    mkdirSync(projectDir, { recursive: true });
    const huge = { type: "object", properties: { label: { enum: Array.from({ length: 20_000 }, (_, index) => `label-${index}`) } } };
    writeFileSync(join(projectDir, "a-huge.js"), `export const apiVersion = 1;\nexport const meta = { description: "${"Sorts. ".repeat(1_000)}", args: ${JSON.stringify(huge)} };\nreturn 1;\n`);
    for (let index = 0; index < 120; index++) writeFileSync(join(projectDir, `w${String(index).padStart(3, "0")}.js`), `export const apiVersion = 1;\nexport const meta = { description: "Workflow ${index}." };\nreturn 1;\n`);
    const result = await pi.callTool("external_help", { topic: "workflows" });
    const data = (result.structuredContent as Envelope).data as { workflows: Array<Record<string, unknown>> };
    // With the four shipped, and what the file's other tests saved in this session's project.
    expect(data.workflows.length).toBeGreaterThanOrEqual(125);
    expect(data.workflows.find((workflow) => workflow.name === "a-huge")?.args).toEqual(huge);
    expect(result.text).toMatch(/^- a-huge \(project\): (Sorts\. )+.*… \[\d+ more characters cut\] args: \{"type":"object".*… \[\d+ more characters cut\]$/m);
    expect(result.text).toContain(`… and ${data.workflows.length - 100} more saved workflows (the structured answer's workflows lists them all)`);
    expect(result.text.length).toBeLessThan(20_000);
  });

  test("the roles topic lists built-in roles and role files with their tools, and the role file format", async () => {
    const rolesDir = join(pi.cwd, ".pi", "flow", "roles");
    mkdirSync(rolesDir, { recursive: true });
    writeFileSync(join(rolesDir, "auditor.md"), "---\ndescription: Audits dependencies.\ntools: read, grep\n---\nYou audit.\n");
    const result = await pi.callTool("external_help", { topic: "roles" });
    const data = (result.structuredContent as Envelope).data as { roles: Array<Record<string, unknown>> };
    expect(data.roles.map((role) => `${role.name}:${role.source}`)).toEqual(["auditor:project", "explorer:builtin", "reviewer:builtin", "worker:builtin"]);
    expect(result.text).toContain("- auditor (project): Audits dependencies. Tools: read, grep.");
    expect(result.text).toContain(".pi/flow/roles/<name>.md");
    expect(result.text).toContain("context: none");
  });

  test("the roles topic's text stays short with a project of many role files, long descriptions and long tool lists: the structured answer keeps them whole", async () => {
    const rolesDir = join(pi.cwd, ".pi", "flow", "roles");
    mkdirSync(rolesDir, { recursive: true });
    const tools = Array.from({ length: 400 }, (_, index) => `tool_${index}`);
    const description = "Audits. ".repeat(1_000).trim();
    writeFileSync(join(rolesDir, "a-wordy.md"), `---\ndescription: ${description}\ntools: ${tools.join(", ")}\n---\nYou audit.\n`);
    for (let index = 0; index < 120; index++) writeFileSync(join(rolesDir, `r${String(index).padStart(3, "0")}.md`), `---\ndescription: Role ${index}.\n---\nYou help.\n`);
    const result = await pi.callTool("external_help", { topic: "roles" });
    const data = (result.structuredContent as Envelope).data as { roles: Array<Record<string, unknown>> };
    expect(data.roles.length).toBeGreaterThanOrEqual(124);
    expect(data.roles.find((role) => role.name === "a-wordy")).toMatchObject({ description, tools });
    expect(result.text).toMatch(/^- a-wordy \(project\): (Audits\. )+.*… \[\d+ more characters cut\] Tools: tool_0, tool_1, .*… \[\d+ more characters cut\]\.$/m);
    expect(result.text).toContain(`… and ${data.roles.length - 100} more roles (the structured answer's roles lists them all)`);
    expect(result.text).toContain(".pi/flow/roles/<name>.md");
    expect(result.text.length).toBeLessThan(20_000);
  });

  test("the limits topic states the limits the runtime enforces", async () => {
    const result = await pi.callTool("external_help", { topic: "limits" });
    for (const name of LIMIT_NAMES) {
      expect(result.text).toContain(`- ${name}: `);
      expect(result.text).toContain(`Default ${DEFAULT_LIMITS[name]}, ceiling ${LIMIT_CEILINGS[name]}.`);
    }
    expect(result.text).toContain("- nesting depth: a workflow may start workflows (tools.external_workflow) to depth 2");
  });

  test("the limits topic states the bounds of supervision and of one child, with their values", async () => {
    const { text } = await pi.callTool("external_help", { topic: "limits" });
    for (const bound of [
      `inspect takes at most ${MAX_BATCH_TARGETS} runIds`,
      `wait at most ${MAX_WAIT_TARGETS}`,
      `list rows per stream: default ${DEFAULT_LIST_LIMIT}, at most ${MAX_LIST_LIMIT}`,
      `at most ${MAX_PAGE_BYTES} bytes`,
      `at most ${MAX_STEER_CHARS} characters`,
      `timeoutMs at most ${MAX_CHILD_TIMEOUT_MS}`,
      "PI_FLOW_MAX_BACKGROUND",
      "PI_FLOW_MAX_QUEUED",
    ]) {
      expect(text).toContain(bound);
    }
  });

  test.each([
    [{ topic: "workflows" }, /agent\(options\)/],
    [{ topic: "harnesses" }, /claude/],
    [{ topic: "harnesses", harness: "pi" }, /in-process/],
    [{ topic: "harnesses", harness: "replay" }, /PI_FLOW_REPLAY/],
    [{ topic: "harnesses", harness: "claude" }, /harness_unavailable/],
    [{ topic: "limits" }, /agentCalls/],
    [{ topic: "errors" }, /run_unavailable/],
    [{ topic: "roles" }, /reviewer/],
  ])("topic %j answers with text", async (args, pattern) => {
    const result = await pi.callTool("external_help", args);
    const envelope = result.structuredContent as Envelope;
    expect(result.isError).toBe(false);
    expect(schemaViolation(helpOutput, envelope)).toBeNull();
    expect(envelope.data).toMatchObject({ ...args, text: expect.stringMatching(pattern) });
    expect(result.text).toBe(envelope.data!.text);
  });

  test("the errors topic names every error code and every warning a receipt may carry, each with its meaning", async () => {
    const { text } = await pi.callTool("external_help", { topic: "errors" });
    const warnings = ["output_redacted", "evidence_incomplete", HANDLED_CHILD_FAILURES, TOOLS_WITHHELD, STUBBED];
    const unexplained = [...ERROR_CODE_LIST, ...warnings].filter((code) => !new RegExp(`^- ${code}: \\S`, "m").test(text));
    expect(unexplained).toEqual([]);
  });

  test("the errors topic's page_too_small covers the single page a view answers too, and says what to do", async () => {
    const { text } = await pi.callTool("external_help", { topic: "errors" });
    const line = text.split("\n").find((entry) => entry.startsWith("- page_too_small: "));
    expect(line).toMatch(/single page/);
    expect(line).toMatch(/next character/);
    expect(line).toMatch(/larger limitBytes/);
  });

  test.each([
    [{ topic: "recipes" }, /Unknown topic "recipes"/],
    [{ topic: "contracts", tool: "external_teleport" }, /Unknown tool "external_teleport"/],
    [{ topic: "harnesses", harness: "gemini" }, /Unknown harness "gemini"/],
    // Names every JavaScript object answers to are not harnesses either.
    [{ topic: "harnesses", harness: "constructor" }, /Unknown harness "constructor"/],
    [{ topic: "harnesses", harness: "toString" }, /Unknown harness "toString"/],
    [{ topic: "harnesses", harness: "__proto__" }, /Unknown harness "__proto__"/],
  ])("%j is ok:false, selection_invalid, data null, and a red row", async (args, pattern) => {
    const result = await pi.callTool("external_help", args);
    const envelope = result.structuredContent as Envelope;
    expect(result.isError).toBe(true);
    expect(schemaViolation(helpOutput, envelope)).toBeNull();
    expect(envelope).toMatchObject({ ok: false, data: null, error: { code: "selection_invalid", message: expect.stringMatching(pattern) } });
    expect(result.text).toContain("selection_invalid");
  });

  test("an unknown name that is a secret (a key pasted in the wrong field) is quoted back redacted", async () => {
    const secret = "ghp_" + "Zq7Lm2Xw9Rt4Vb8Nc1Jk5Hp3Ds6Fa0Gy2Ue4";
    const result = await pi.callTool("external_help", { topic: "harnesses", harness: secret });
    expect(result.structuredContent).toMatchObject({ ok: false, error: { code: "selection_invalid", message: expect.stringContaining('Unknown harness "[REDACTED]"') } });
    expect(JSON.stringify(result.structuredContent)).not.toContain(secret);
    expect(result.text).not.toContain(secret);
  });

  test.each([
    ["topic", { topic: "Z".repeat(200_000) }],
    ["tool", { topic: "contracts", tool: "Z".repeat(200_000) }],
    ["harness", { topic: "harnesses", harness: "Z".repeat(200_000) }],
  ])("an unknown %s of 200,000 characters is quoted back cut short, not whole into the model's context", async (what, args) => {
    const result = await pi.callTool("external_help", args as Record<string, unknown>);
    const envelope = result.structuredContent as Envelope;
    expect(schemaViolation(helpOutput, envelope)).toBeNull();
    expect(envelope).toMatchObject({ ok: false, data: null, error: { code: "selection_invalid", message: expect.stringContaining(`Unknown ${what} "ZZZZ`) } });
    expect(envelope.error!.message).toMatch(/…" \(200000 characters\)\. Known: /);
    expect(envelope.error!.message.length).toBeLessThan(400);
    expect(result.text.length).toBeLessThan(400);
  });

  test("a secret longer than the quote is redacted before it is cut, so no part of it is quoted back", async () => {
    // A JWT's first 64 characters are no JWT to the redaction patterns: cut first, they would be quoted.
    const secret = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    const result = await pi.callTool("external_help", { topic: "harnesses", harness: secret });
    expect(result.structuredContent).toMatchObject({ error: { message: expect.stringContaining('Unknown harness "[REDACTED]"') } });
    expect(JSON.stringify(result.structuredContent)).not.toContain("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9");
    expect(result.text).not.toContain("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9");
  });

  test.each([
    [{ topic: "roles", tool: "external_runs" }],
    [{ topic: "contracts", harness: "pi" }],
  ])("%j (a tool or harness with the wrong topic) is request_invalid", async (args) => {
    const result = await pi.callTool("external_help", args);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ ok: false, data: null, error: { code: "request_invalid" } });
  });

  test("malformed arguments fail Pi's validation before execute runs", async () => {
    const result = await pi.callTool("external_help", { tool: "external_runs" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/Validation failed for tool "external_help"/);
    expect(result.structuredContent).toBeUndefined();
    const extra = await pi.callTool("external_help", { topic: "contracts", verbose: true });
    expect(extra.text).toMatch(/verbose: unknown field/);
  });
});

describe("a session with workflows turned off", () => {
  test("does not register external_workflow, and the index says so", async () => {
    const off = await startPiSession({ env: { PI_FLOW_WORKFLOWS: "off" } });
    try {
      const result = await off.callTool("external_help", { topic: "contracts" });
      const tools = ((result.structuredContent as Envelope).data!.index as { tools: { name: string; registered: boolean }[] }).tools;
      expect(tools.find((tool) => tool.name === "external_workflow")?.registered).toBe(false);
      expect(tools.find((tool) => tool.name === "external_delegate")?.registered).toBe(true);
      const call = await off.callTool("external_workflow", { script: "return 1;" });
      expect(call.isError).toBe(true);
    } finally {
      await off.dispose();
    }
  });
});

describe("external_help from native codemode", () => {
  test("scripts receive the structured envelope, for success and for a typed failure alike", async () => {
    const outcome = await pi.runCodemode(`
      const index = await tools.external_help({ topic: "contracts" });
      const missing = await tools.external_help({ topic: "contracts", tool: "nope" });
      return { index, missing };`);
    expect(outcome.isError).toBe(false);
    const { index, missing } = outcome.value as { index: Envelope; missing: Envelope };
    expect(schemaViolation(helpOutput, index)).toBeNull();
    expect(index).toMatchObject({ ok: true, data: { topic: "contracts" } });
    expect(missing).toMatchObject({ ok: false, data: null, error: { code: "selection_invalid" } });
  });

  test("malformed arguments reject the call inside the script", async () => {
    const outcome = await pi.runCodemode(`
      try { await tools.external_help({ topic: "contracts", tool: 12, colour: "red" }); return "resolved"; }
      catch (error) { return String(error.message); }`);
    expect(outcome.value).toMatch(/Validation failed for tool "external_help"/);
  });

  test("describeTool renders external_help's input and output types", async () => {
    const outcome = await pi.runCodemode(`return await describeTool("external_help");`);
    const declaration = outcome.value as string;
    expect(declaration).toContain("external_help(args: {");
    expect(declaration).toMatch(/topic: string;/);
    expect(declaration).toMatch(/ok: true;/);
    expect(declaration).toMatch(/ok: false;/);
    expect(declaration).toMatch(/"selection_invalid"/);
  });
});
