import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, onTestFinished, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { childAnswers, childHangs, childModelFails } from "../support/children.ts";
import { callForReceipt } from "../support/receipts.ts";
import { startPiSession, type PiTestSession, type TurnScript } from "../support/pi-session.ts";

let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
});
afterEach(() => pi.dispose());

const workflow = (args: Record<string, unknown>, script: TurnScript = {}) => callForReceipt(pi, "external_workflow", args, script);

/** The run's journal, as written to disk, one parsed line each. */
function journalOf(runId: string): Record<string, unknown>[] {
  const find = (dir: string): string | undefined => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      if (entry.name === runId) return join(path, "journal.jsonl");
      const inner = find(path);
      if (inner) return inner;
    }
    return undefined;
  };
  const path = find(pi.flowHome);
  if (!path) throw new Error(`no journal for ${runId}`);
  return readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
}

const explorer = (prompt: string) => `agent({ role: "explorer", description: "d", prompt: ${JSON.stringify(prompt)}, context: { mode: "none" } })`;

describe("selecting the script", () => {
  test("both sources, or neither, is request_invalid and launches nothing", async () => {
    for (const args of [{ workflow: "review", script: "return 1;" }, { args: {} }]) {
      const { receipt } = await workflow(args);
      expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
    }
    expect(existsSync(pi.flowHome)).toBe(false);
  });

  test("an unknown name is selection_invalid and the message lists the saved workflows", async () => {
    const { receipt, result } = await workflow({ workflow: "no-such-flow" });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "selection_invalid" } });
    expect(receipt.error!.message).toMatch(/handoff, map, parallel-edit, review/);
    expect(result.text).toContain("selection_invalid");
  });

  test("a workflow name of 200,000 characters is request_invalid, quoted back cut short, not whole into the model's context", async () => {
    const { receipt, result } = await workflow({ workflow: "Z".repeat(200_000) });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
    expect(receipt.error!.message).toMatch(/^"Z{64}…" \(200000 characters\) is not a workflow name/);
    expect(result.text.length).toBeLessThan(400);
  });

  test("a project file overrides a user file, which overrides a shipped one; the receipt says which ran", async () => {
    const saved = (where: string) => `export const apiVersion = 1;\nexport const meta = { name: "review" };\nreturn "${where}";\n`;
    const projectDir = join(pi.cwd, ".pi", "flow", "workflows");
    const userDir = join(pi.flowHome, "workflows");
    mkdirSync(projectDir, { recursive: true });
    mkdirSync(userDir, { recursive: true });
    writeFileSync(join(projectDir, "review.js"), saved("project"));
    writeFileSync(join(userDir, "review.js"), saved("user"));
    const first = await workflow({ workflow: "review" });
    expect(first.run).toMatchObject({ task: { workflow: "review", source: "project" }, output: { value: "project" } });
    rmSync(join(projectDir, "review.js"));
    const second = await workflow({ workflow: "review" });
    expect(second.run).toMatchObject({ task: { workflow: "review", source: "user" }, output: { value: "user" } });
  });

  test.each([
    ["a syntax error", "const x = 1;\nconst y = ;\nreturn x;", /line 2, column 11/],
    ["an unsupported apiVersion", "export const apiVersion = 2;\nreturn 1;", /unsupported apiVersion 2.*line 1, column 27/],
    ["a meta that is not literal", "const n = 'x';\nexport const meta = { name: n };\nreturn 1;", /meta.*literal.*line 2/],
    ["a limit above its ceiling", "export const meta = { limits: { agentCalls: 100000 } };\nreturn 1;", /agentCalls.*ceiling/],
    ["an import", 'import fs from "node:fs";\nreturn 1;', /imports are not allowed.*line 1, column 1/],
  ])("%s is script_invalid with its position, and nothing is launched", async (_name, script, message) => {
    const { receipt } = await workflow({ script });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "script_invalid" } });
    expect(receipt.error!.message).toMatch(message);
    expect(existsSync(pi.flowHome)).toBe(false);
  });

  test("a syntax error's message quotes its line with a caret under the column, a secret on it redacted", async () => {
    const { receipt } = await workflow({ script: "const x = 1;\nconst y = { a: 1 b: 2 };\nreturn x;" });
    expect(receipt.error!.message).toBe("syntax error: Unexpected token (inline.js, line 2, column 18)\n    const y = { a: 1 b: 2 };\n                     ^");
    const secret = "sk-ant-api03-" + "W".repeat(40);
    const result = await pi.callTool("external_workflow", { script: `const key = "${secret}" +;\nreturn 1;` });
    expect(result.structuredContent).toMatchObject({ ok: false, error: { code: "script_invalid", message: expect.stringMatching(/\n {4}const key = "?\[REDACTED\]"? \+;\n +\^$/) } });
    expect(JSON.stringify(result.structuredContent)).not.toContain("WWWW");
    expect(result.text).not.toContain("WWWW");
  });

  test("a saved workflow without apiVersion and meta is script_invalid", async () => {
    mkdirSync(join(pi.cwd, ".pi", "flow", "workflows"), { recursive: true });
    writeFileSync(join(pi.cwd, ".pi", "flow", "workflows", "bare.js"), "return 1;\n");
    const { receipt } = await workflow({ workflow: "bare" });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "script_invalid" } });
    expect(receipt.error!.message).toMatch(/apiVersion/);
  });

  test("a saved workflow run by name, and an inline script, get flow run's literal checks: an unknown role, a misspelt agent() option, a tool it may not call, before any child runs", async () => {
    mkdirSync(join(pi.cwd, ".pi", "flow", "workflows"), { recursive: true });
    const source = [
      "export const apiVersion = 1;",
      'export const meta = { name: "typo" };',
      `await ${explorer("first")};`,
      'await agent({ role: "reviewr", description: "d", prompt: "p", outputschema: {} });',
      'await tools.bash({ command: "ls" });',
    ].join("\n");
    writeFileSync(join(pi.cwd, ".pi", "flow", "workflows", "typo.js"), source);
    const { receipt } = await workflow({ workflow: "typo" });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "script_invalid" } });
    const message = receipt.error!.message;
    expect(message).toMatch(/typo\.js:4:\d+: role: "reviewr" is not a known role here/);
    expect(message).toMatch(/typo\.js:4:\d+: .*outputschema.*outputSchema/);
    expect(message).toMatch(/typo\.js:5:\d+: .*tools\.bash/);
    expect(existsSync(pi.flowHome)).toBe(false);
    // The same calls given inline are refused the same way, at their lines in inline.js.
    const inline = await workflow({ script: source.split("\n").slice(2).join("\n") });
    expect(inline.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "script_invalid" } });
    expect(inline.receipt.error!.message).toMatch(/inline\.js:2:\d+: role: "reviewr" is not a known role here/);
    expect(inline.receipt.error!.message).toMatch(/inline\.js:3:\d+: .*tools\.bash/);
    expect(existsSync(pi.flowHome)).toBe(false);
  });

  test("a script of hundreds of problems, or a meta.tools of thousands of unknown names, is refused in a message of the first twenty, then how many more: not every one into the model's context", async () => {
    const names = Array.from({ length: 2_000 }, (_, index) => `tool_${index}`);
    const tools = await workflow({ script: `export const meta = { tools: ${JSON.stringify(names)} };\nreturn 1;` });
    expect(tools.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "script_invalid" } });
    expect(tools.receipt.error!.message).toMatch(new RegExp(`^meta\\.tools names ${names.slice(0, 20).join(", ")}, … and 1980 more, which this session cannot call \\(callable: `));
    expect(tools.receipt.error!.message.length).toBeLessThan(2_000);
    // One name of 30,000 characters is cut short too.
    const long = await workflow({ script: `export const meta = { tools: ["${"t".repeat(30_000)}"] };\nreturn 1;` });
    expect(long.receipt.error!.message).toMatch(/^meta\.tools names t{100}… \[29900 more characters cut\], which this session cannot call/);
    expect(long.receipt.error!.message.length).toBeLessThan(2_000);
    const calls = Array.from({ length: 500 }, (_, index) => `await agent({ role: "nope_${index}", prompt: "p" });`).join("\n");
    const problems = await workflow({ script: calls });
    expect(problems.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "script_invalid" } });
    const lines = problems.receipt.error!.message.split("\n");
    expect(lines[0]).toMatch(/^inline\.js:1:\d+: role: "nope_0" is not a known role here \(known: explorer, reviewer, worker\)$/);
    expect(lines.slice(-1)).toEqual(["… and 480 more problems (flow check lists them all)"]);
    expect(lines).toHaveLength(21);
    const longRole = await workflow({ script: `await agent({ role: "${"r".repeat(30_000)}", prompt: "p" });` });
    expect(longRole.receipt.error!.message).toMatch(/^inline\.js:1:\d+: role: "r{100}… \[29900 more characters cut\]" is not a known role here/);
  });

  test("args are checked against meta.args: request_invalid names the first violation", async () => {
    const { receipt } = await workflow({ workflow: "map", args: { items: ["a", 7], prompt: "p" } });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
    expect(receipt.error!.message).toMatch(/^args\/items\/1: expected string/);
  });

  test("a required argument left out says how to pass it: in args, with every required one missing", async () => {
    const { receipt } = await workflow({ workflow: "review" });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
    expect(receipt.error!.message).toBe('args/target: missing; give it in args: {"target": "…"}');
    const map = await workflow({ workflow: "map", args: { prompt: "p" } });
    expect(map.receipt.error!.message).toBe('args/items: missing; give it in args: {"items": …}');
  });

  test("a journal that cannot be written is storage_unavailable, before registration", async () => {
    // Where runs live is read as the session starts (FlowHost.settings): this session's is under a file.
    await pi.dispose();
    const root = mkdtempSync(join(tmpdir(), "pi-flow-blocked-"));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const blocker = join(root, "not-a-dir");
    writeFileSync(blocker, "x");
    pi = await startPiSession({ cwd: root, env: { PI_FLOW_HOME: join(blocker, "home") } });
    const { receipt } = await workflow({ script: "return 1;" });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "storage_unavailable" } });
  });
});

describe("receipts", () => {
  test("an empty or blank description is as if none were given: the run keeps its workflow's label", async () => {
    for (const description of ["", "  \n "]) {
      const { run, result } = await workflow({ script: "export const meta = { name: 'tally', description: 'Count the things' };\nreturn 1;", description });
      expect(run?.task.description).toBe("Count the things");
      expect(result.text).not.toContain('""');
    }
  });

  test("a root that succeeded: ok, the script's value, children counted, the child indexed in the journal", async () => {
    const script = `const r = await ${explorer("List the parsers.")};\nstore("found", r.value);\nreturn { found: r.value, child: r.runId };`;
    const { receipt, run, result } = await workflow({ script, description: "Find parsers" }, { children: [childAnswers("parser-a")] });
    expect(receipt.ok).toBe(true);
    expect(receipt.warnings).toEqual([]);
    expect(run).toMatchObject({
      kind: "workflow",
      task: { description: "Find parsers", workflow: "inline", source: "inline" },
      state: { status: "done", outcome: "succeeded" },
      children: { count: 1, failed: 0 },
      output: { delivery: "inline", value: { found: "parser-a" } },
    });
    const childId = (run!.output.value as { child: string }).child;
    expect(result.text).toContain(run!.runId);
    const lines = journalOf(run!.runId);
    expect(lines.map((line) => line.t)).toEqual(["start", "event", "event", "child", "store", "terminal"]);
    expect(lines[3]).toMatchObject({ t: "child", childRunId: childId, outcome: "succeeded", data: { index: 0 } });
    expect(lines[4]).toMatchObject({ t: "store", key: "found", value: "parser-a" });
    expect(journalOf(childId)[0]).toMatchObject({ t: "start", kind: "agent", task: { parentRunId: run!.runId } });
  });

  test("a child failure the script does not catch fails the root: ok:false, code failed, evidence kept", async () => {
    const { receipt, run } = await workflow({ script: `return await ${explorer("p")};` }, { children: [childModelFails("provider exploded")] });
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed" } });
    expect(receipt.error!.message).toMatch(/provider exploded/);
    expect(run).toMatchObject({ state: { outcome: "failed" }, children: { count: 1, failed: 1 } });
    expect(run!.refs.diagnostics).toBeDefined();
  });

  test("a root that caught a child failure stays ok, with handled_child_failures in warnings and content", async () => {
    const script = `try { await ${explorer("p")}; } catch (error) { return { caught: error.code, runId: error.runId }; }`;
    const { receipt, run, result } = await workflow({ script }, { children: [childModelFails("provider exploded")] });
    expect(receipt.ok).toBe(true);
    expect(receipt.warnings).toContain("handled_child_failures");
    expect(result.text).toMatch(/handling 1 failed agent\(\) call/);
    expect(run).toMatchObject({ children: { count: 1, failed: 1 }, output: { value: { caught: "failed" } } });
  });

  test("a bad agent() call fails before a child is indexed: catchable, counted as failed, not as a child", async () => {
    // Built at run time: written whole in the call, the launch's literal checks would refuse it first.
    const script = `const options = { description: "no selector", prompt: "p" };\ntry { await agent(options); } catch (e) { return [e.code, e.message]; }`;
    const { receipt, run } = await workflow({ script });
    expect(receipt).toMatchObject({ ok: true, warnings: ["handled_child_failures"] });
    // It names the roles this project has, as flow check does for one written whole.
    expect(run).toMatchObject({ children: { count: 0, failed: 1 }, output: { value: ["request_invalid", 'agent() call 1 ("no selector"): Give role or subagent_type (roles here: explorer, reviewer, worker).'] } });
  });

  test("an outputSchema built at run time that is no usable JSON Schema names the agent() call it was given to", async () => {
    const script = `const type = ["strin"][0];\nreturn await agent({ role: "explorer", description: "Second look", prompt: "p", outputSchema: { type } });`;
    const { receipt, run } = await workflow({ script });
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed" } });
    expect(run!.children).toMatchObject({ count: 0, failed: 1 });
    expect(receipt.error!.message).toMatch(/^FlowError: agent\(\) call 1 \("Second look"\): outputSchema is not a usable JSON Schema: type must be equal to one of the allowed values \[request_invalid\]/);
  });

  test("every refused agent() call is named by its number and description", async () => {
    const caught = [
      `{ role: "explorer", description: "First look", prompt: "p", timeoutMs: 5 }`,
      `{ role: "explorer", description: "Second look", prompt: "p", outputschema: {} }`,
    ];
    const script = `const messages = [];\nfor (const options of [${caught.join(", ")}]) {\n  try { await agent(options); } catch (e) { messages.push(e.message); }\n}\nreturn messages;`;
    expect((await workflow({ script })).run!.output).toMatchObject({
      value: ['agent() call 1 ("First look") option timeoutMs: expected >= 1000.', 'agent() call 2 ("Second look") does not take outputschema (did you mean outputSchema?).'],
    });
    // A fatal refusal ends the run from the host: its error names the call, cutting a long description.
    // The role is built at run time: written literally, the launch would refuse it before the run.
    const fatal = await workflow({ script: `await agent({ role: "nonexistent_" + "role", description: "${"x".repeat(100)}", prompt: "p" });` });
    expect(fatal.receipt.error!.message).toMatch(new RegExp(`^agent\\(\\) call 1 \\("${"x".repeat(60)}…"\\): Unknown role "nonexistent_role"`));
  });

  test("an unknown role fails the root even when caught, and is not counted as a failed child", async () => {
    // Built at run time: a literal unknown role is refused at launch, before the run starts.
    const script = `const role = "nonexistent_" + "role";\ntry { await agent({ role, description: "d", prompt: "p" }); } catch (e) { return "caught"; }`;
    const { receipt, run } = await workflow({ script });
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed" } });
    // Raised by the host, it still names the script's call.
    expect(receipt.error!.message).toMatch(/nonexistent_role.* at line 2, column 18$/);
    expect(run).toMatchObject({ state: { outcome: "failed" }, children: { count: 0, failed: 0 } });
  });

  test("the agent-call limit fails the root, even when caught, and is not counted as a failed child", async () => {
    const script = [
      "export const meta = { limits: { agentCalls: 2 } };",
      `const out = [];`,
      `for (let i = 0; i < 3; i++) { try { out.push((await ${explorer("p")}).value); } catch (e) { out.push(e.code); } }`,
      `return out;`,
    ].join("\n");
    const { receipt, run } = await workflow({ script }, { children: [childAnswers("one"), childAnswers("two")] });
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed", message: expect.stringContaining("agent call limit (2) reached") } });
    expect(run).toMatchObject({ state: { outcome: "failed" }, children: { count: 2, failed: 0 } });
  });

  test("a script that returns nothing succeeds with the value null (a deviation: v1's ok asks for a non-empty answer); false, zero and the empty string are valid results too", async () => {
    const { receipt, run } = await workflow({ script: "const a = 1;" });
    expect(receipt).toMatchObject({ ok: true, data: { run: { state: { outcome: "succeeded" }, output: { finalAvailable: true, delivery: "inline", value: null } } } });
    const page = await pi.callTool("external_runs", { ...run!.refs.final!, limitBytes: 4096 });
    expect(JSON.parse((page.structuredContent as { data: { page: { text: string } } }).data.page.text)).toEqual({ result: null });
    // As are false, zero and the empty string (v1: "valid results"): inline, served whole by refs.final and by wait.
    for (const value of [false, 0, ""]) {
      const { receipt, run } = await workflow({ script: `return ${JSON.stringify(value)};` });
      expect(receipt).toMatchObject({ ok: true, data: { run: { state: { outcome: "succeeded" }, output: { finalAvailable: true, delivery: "inline", value } } } });
      const page = await pi.callTool("external_runs", { ...run!.refs.final!, limitBytes: 4096 });
      expect(JSON.parse((page.structuredContent as { data: { page: { text: string } } }).data.page.text)).toEqual({ result: value });
      const waited = await pi.callTool("external_runs", { action: "wait", runIds: [run!.runId] });
      expect(waited.structuredContent).toMatchObject({ ok: true, data: { completed: [{ runId: run!.runId, output: { finalAvailable: true, delivery: "inline", value } }], pending: [] } });
    }
  });

  test("a script error fails the root with its line and column", async () => {
    const { receipt } = await workflow({ script: "const a = 1;\nnull.boom;\nreturn a;" });
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed" } });
    expect(receipt.error!.message).toMatch(/TypeError: .*line 2, column \d+/);
  });

  test("the wall-time limit times the root out: ok:false timed_out, and every child it launched is stopped", async () => {
    // The child never answers, so only the wall-time limit can end the root. The limit counts from
    // the launch, sandbox start included: on a loaded machine it may pass before the child was
    // launched, so the test asserts what holds either way, never how far the script got.
    const script = `export const meta = { limits: { timeoutMs: 300 } };\nawait ${explorer("p")};\nreturn "never";`;
    const { receipt, run } = await workflow({ script }, { children: [childHangs()] });
    expect(receipt).toMatchObject({ ok: false, error: { code: "timed_out" } });
    expect(run).toMatchObject({ state: { outcome: "timed_out" } });
    const children = journalOf(run!.runId).filter((line) => line.t === "child");
    expect(children).toHaveLength(run!.children?.count ?? 0);
    for (const child of children) expect(child).toMatchObject({ outcome: "cancelled" });
  });

  test("Esc on a foreground root stops the children it waits on; a run it started in the background goes on, as its description says", async () => {
    const description = pi.session.getAllTools().find((tool) => tool.name === "external_workflow")?.description ?? "";
    expect(description).toMatch(/a run the script starts with background: true goes on/);
    let started!: () => void;
    const hanging = new Promise<void>((resolve) => (started = resolve));
    const script = [
      'export const meta = { name: "fan", tools: ["external_delegate"] };',
      'const bg = await tools.external_delegate({ role: "worker", description: "bg", prompt: "p", context: { mode: "none" }, background: true });',
      `await ${explorer("hang")};`,
      "return bg.data.run.runId;",
    ].join("\n");
    const call = pi.callTool("external_workflow", { script }, { children: [childHangs(), childHangs(started)] });
    await hanging;
    await pi.session.abort();
    expect((await call).structuredContent).toMatchObject({ ok: false, error: { code: "cancelled" } });
    const listed = await pi.callTool("external_runs", { action: "list" });
    const runs = (listed.structuredContent as { data: { runs: RunView[] } }).data.runs;
    expect(runs.find((run) => run.task.description === "bg")).toMatchObject({ live: true, state: { status: "running" } });
    expect(runs.find((run) => run.task.description === "d")).toMatchObject({ state: { outcome: "cancelled" } });
    await pi.callTool("external_runs", { action: "cancel", runIds: [runs.find((run) => run.task.description === "bg")!.runId] });
  });

  test("a root stopped while its child runs stops the child, and the child's end is journaled as cancelled", async () => {
    let started!: () => void;
    const childStarted = new Promise<void>((resolve) => (started = resolve));
    const script = `await ${explorer("p")};\nreturn "never";`;
    const { run } = await workflow({ script, background: true }, { children: [childHangs(() => started())] });
    await childStarted;
    await pi.callTool("external_runs", { action: "cancel", runIds: [run!.runId] });
    const waited = await pi.callTool("external_runs", { action: "wait", runIds: [run!.runId] });
    const [ended] = (waited.structuredContent as { data: { completed: RunView[] } }).data.completed;
    expect(ended).toMatchObject({ state: { outcome: "cancelled" }, children: { count: 1 } });
    expect(journalOf(run!.runId).find((line) => line.t === "child")).toMatchObject({ outcome: "cancelled" });
  });

  test("an answer over 16 KiB reaches the script whole; a large workflow result is delivered by reference", async () => {
    const big = "y".repeat(20 * 1024);
    const script = `const r = await ${explorer("p")};\nreturn { length: r.value.length, text: r.value + r.value };`;
    const { receipt, run } = await workflow({ script }, { children: [childAnswers(big)] });
    expect(receipt.ok).toBe(true);
    expect(run!.output).toMatchObject({ delivery: "reference", finalAvailable: true });
    const page = await pi.callTool("external_runs", { ...run!.refs.final, limitBytes: 200_000 });
    const value = JSON.parse((page.structuredContent as { data: { page: { text: string } } }).data.page.text) as { result: { length: number; text: string } };
    expect(value.result.length).toBe(big.length);
    expect(value.result.text).toBe(big + big);
  });
});
