import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { defineTool, type ExtensionFactory } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, test } from "vitest";
import { fauxAssistantMessage, fauxText, fauxToolCall, type Context, type FauxResponseStep, type Message } from "@earendil-works/pi-ai";
import { cliTask, fakeRuns, pathWithFakes } from "../support/fake-cli.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";

/**
 * Issue 21, "nothing outranks": a child's tools are its role's within the tools active in the
 * parent session when the call is made, on every harness and through workflows, and its cwd stays
 * where the parent could reach.
 */

let pi: PiTestSession;
afterEach(() => pi?.dispose());

const WRITING = ["bash", "edit", "write"];

/** The parent's model may read, search and delegate, but not write, edit or run commands. */
function makeReadOnly(session: PiTestSession["session"]): void {
  session.setActiveToolsByName(session.getActiveToolNames().filter((tool) => !WRITING.includes(tool)));
}

function widen(session: PiTestSession["session"]): void {
  session.setActiveToolsByName([...new Set([...session.getActiveToolNames(), ...WRITING])]);
}

const worker = { role: "worker", description: "Write it", prompt: "Write pwned.txt.", context: { mode: "none" } };

interface Attempt {
  /** The tools the child's model was offered. */
  offered: string[];
  /** What the child's write call came back with. */
  result?: { isError: boolean; text: string };
}

/** The tools a model request declares: its `tools`, then each system message's additions and removals, in order. */
function offeredTools(context: Context): string[] {
  const names = new Set((context.tools ?? []).map((tool) => tool.name));
  for (const message of context.messages) {
    if (message.role !== "system") continue;
    for (const tool of message.toolsAdded ?? []) names.add(tool.name);
    for (const tool of message.toolsRemoved ?? []) names.delete(tool.name);
  }
  return [...names];
}

/** A child that tries to write `pwned.txt`, then answers with what happened; `before` runs first. */
function childTriesToWrite(attempt: Attempt, before?: () => void): FauxResponseStep[] {
  return [
    (context) => {
      before?.();
      attempt.offered = offeredTools(context);
      return fauxAssistantMessage([fauxToolCall("write", { path: "pwned.txt", content: "the child wrote this" })], { stopReason: "toolUse" });
    },
    (context) => {
      const last = context.messages.findLast((message: Message) => message.role === "toolResult");
      if (last?.role === "toolResult") {
        attempt.result = { isError: last.isError, text: last.content.map((part) => (part.type === "text" ? part.text : "")).join("") };
      }
      return fauxAssistantMessage([fauxText("tried")]);
    },
  ];
}

async function launchView(runId: string): Promise<{ tools: { effective: string[]; withheld: string[]; denied: string[] }; cwd: string }> {
  const result = await pi.callTool("external_runs", { action: "inspect", runIds: [runId], view: "launch", limitBytes: 65536 });
  return JSON.parse((result.structuredContent as { data: { page: { text: string } } }).data.page.text);
}

describe("a pi child of a read-only parent", () => {
  test("by external_delegate: a worker is not offered write, edit or bash, its write fails, the receipt warns and inspect shows its tools", async () => {
    pi = await startPiSession();
    makeReadOnly(pi.session);
    const attempt: Attempt = { offered: [] };
    const { receipt, result } = await callForReceipt(pi, "external_delegate", worker, { children: childTriesToWrite(attempt) });
    expect(receipt.ok).toBe(true);
    expect(attempt.offered.sort()).toEqual(["find", "grep", "ls", "read"]);
    expect(attempt.result?.isError).toBe(true);
    expect(existsSync(join(pi.cwd, "pwned.txt"))).toBe(false);
    expect(receipt.warnings).toContain("tools_withheld");
    expect(result.text).toContain("runs without bash, edit, write");
    const launch = await launchView(receipt.data.run!.runId);
    expect(launch.tools).toEqual({ effective: ["read", "grep", "find", "ls"], withheld: ["bash", "edit", "write"], denied: [] });
  });

  test("the same worker under a parent that holds write does write, with no warning", async () => {
    pi = await startPiSession();
    const attempt: Attempt = { offered: [] };
    const { receipt } = await callForReceipt(pi, "external_delegate", worker, { children: childTriesToWrite(attempt) });
    expect(attempt.offered).toEqual(expect.arrayContaining(["read", "bash", "edit", "write", "grep", "find", "ls"]));
    expect(attempt.result?.isError).toBe(false);
    expect(existsSync(join(pi.cwd, "pwned.txt"))).toBe(true);
    expect(receipt.warnings).not.toContain("tools_withheld");
  });

  test("a background worker's accepted receipt warns already", async () => {
    pi = await startPiSession();
    makeReadOnly(pi.session);
    const attempt: Attempt = { offered: [] };
    pi.queueChildren(childTriesToWrite(attempt));
    const { receipt, result } = await callForReceipt(pi, "external_delegate", { ...worker, background: true });
    expect(receipt).toMatchObject({ ok: true, warnings: ["tools_withheld"] });
    expect(result.text).toContain("tools_withheld");
    await pi.callTool("external_runs", { action: "wait", runIds: [receipt.data.run!.runId] });
    expect(existsSync(join(pi.cwd, "pwned.txt"))).toBe(false);
  });

  test("a resume under a parent that since became read-only continues the worker's session without write, edit or bash", async () => {
    pi = await startPiSession();
    const first = await callForReceipt(pi, "external_delegate", worker, { children: [fauxAssistantMessage([fauxText("first part done")])] });
    expect(first.receipt.ok).toBe(true);
    makeReadOnly(pi.session);
    const attempt: Attempt = { offered: [] };
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...worker, resume: first.receipt.data.run!.runId }, { children: childTriesToWrite(attempt) });
    expect(receipt.ok).toBe(true);
    expect(attempt.offered.sort()).toEqual(["find", "grep", "ls", "read"]);
    expect(attempt.result?.isError).toBe(true);
    expect(existsSync(join(pi.cwd, "pwned.txt"))).toBe(false);
  });

  test("a role's disallowedTools takes a tool away even from a parent that holds it", async () => {
    pi = await startPiSession();
    const roles = join(pi.cwd, ".pi", "flow", "roles");
    mkdirSync(roles, { recursive: true });
    writeFileSync(join(roles, "no-writer.md"), "---\ntools: read, write, bash\ndisallowedTools: write\n---\nYou never write.");
    const attempt: Attempt = { offered: [] };
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...worker, role: "no-writer" }, { children: childTriesToWrite(attempt) });
    expect(attempt.offered.sort()).toEqual(["bash", "read"]);
    expect(existsSync(join(pi.cwd, "pwned.txt"))).toBe(false);
    expect(receipt.warnings).not.toContain("tools_withheld");
    expect((await launchView(receipt.data.run!.runId)).tools).toEqual({ effective: ["read", "bash"], withheld: [], denied: ["write"] });
  });
});

/** An extension's tools under names Pi's tool lists would read as `+name`/`-name` modifiers of the default tools, or as a `*` pattern. */
const modifierNamedTools: ExtensionFactory = (api) => {
  for (const name of ["+write", "-read", "*"]) {
    api.registerTool(defineTool({ name, label: name, description: "An oddly named tool.", parameters: Type.Object({}), execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }) }));
  }
};

describe("a parent tool named like a tool-list modifier (+name, -name) or pattern (*)", () => {
  test("gives a read-only parent's child neither write nor Pi's default tools: the name is withheld, the child keeps what the parent holds", async () => {
    pi = await startPiSession({ extensions: [modifierNamedTools] });
    makeReadOnly(pi.session);
    expect(pi.session.getActiveToolNames()).toEqual(expect.arrayContaining(["+write", "-read", "*"]));
    const roles = join(pi.cwd, ".pi", "flow", "roles");
    mkdirSync(roles, { recursive: true });
    writeFileSync(join(roles, "plus.md"), "---\ntools: +write\n---\nYou add.");
    writeFileSync(join(roles, "minus.md"), "---\ntools: read, -read\n---\nYou subtract.");
    writeFileSync(join(roles, "star.md"), '---\ntools: [read, "*"]\n---\nYou match.');
    for (const role of ["plus", "minus", "star"]) {
      const attempt: Attempt = { offered: [] };
      const { receipt } = await callForReceipt(pi, "external_delegate", { ...worker, role }, { children: childTriesToWrite(attempt) });
      expect(receipt.ok, role).toBe(true);
      expect(attempt.offered.filter((tool) => WRITING.includes(tool)), role).toEqual([]);
      expect(attempt.result?.isError, role).toBe(true);
      expect(existsSync(join(pi.cwd, "pwned.txt")), role).toBe(false);
      expect(receipt.warnings, role).toContain("tools_withheld");
    }
  });
});

describe("a Pi agent definition's child", () => {
  test("without a tools list asks for Pi's defaults, and gets them only within a read-only parent's tools", async () => {
    pi = await startPiSession();
    makeReadOnly(pi.session);
    mkdirSync(join(pi.cwd, ".pi", "agents"), { recursive: true });
    writeFileSync(join(pi.cwd, ".pi", "agents", "helper.md"), "---\nname: helper\ndescription: Helps\n---\nYou help.");
    const attempt: Attempt = { offered: [] };
    const call = { subagent_type: "helper", description: "Help", prompt: "Write pwned.txt.", context: { mode: "none" } };
    const { receipt } = await callForReceipt(pi, "external_delegate", call, { children: childTriesToWrite(attempt) });
    expect(attempt.offered).toEqual(["read"]);
    expect(existsSync(join(pi.cwd, "pwned.txt"))).toBe(false);
    expect(receipt.warnings).toContain("tools_withheld");
    expect((await launchView(receipt.data.run!.runId)).tools).toEqual({ effective: ["read"], withheld: ["bash", "edit", "write"], denied: [] });
  });
});

describe("workflows carry the bound taken when the workflow call was made", () => {
  test("agent() children of a read-only parent cannot write, and the root's receipt warns", async () => {
    pi = await startPiSession();
    makeReadOnly(pi.session);
    const attempt: Attempt = { offered: [] };
    const script = 'const a = await agent({ role: "worker", prompt: "Write pwned.txt.", context: { mode: "none" } });\nreturn a.runId;';
    const { receipt, result } = await callForReceipt(pi, "external_workflow", { script }, { children: childTriesToWrite(attempt) });
    expect(receipt.ok).toBe(true);
    expect(attempt.offered).not.toContain("write");
    expect(attempt.result?.isError).toBe(true);
    expect(existsSync(join(pi.cwd, "pwned.txt"))).toBe(false);
    expect(receipt.warnings).toContain("tools_withheld");
    expect(result.text).toContain("tools_withheld");
    expect((await launchView(receipt.data.run!.output.value as string)).tools.withheld).toEqual(["bash", "edit", "write"]);
  });

  test("a nested workflow's child keeps the outer call's bound, though the parent gained write meanwhile", async () => {
    pi = await startPiSession();
    makeReadOnly(pi.session);
    const first: Attempt = { offered: [] };
    const nested: Attempt = { offered: [] };
    const inner = 'const c = await agent({ role: "worker", prompt: "Write pwned.txt.", context: { mode: "none" } });\nreturn c.runId;';
    const outer = [
      'export const meta = { tools: ["external_workflow", "external_delegate"] };',
      'await agent({ role: "worker", prompt: "First.", context: { mode: "none" } });',
      `const receipt = await tools.external_workflow({ script: ${JSON.stringify(inner)} });`,
      "return receipt.data.run.output.value;",
    ].join("\n");
    // The first child widens the parent before the nested workflow starts: the bound was taken already.
    const children = [...childTriesToWrite(first, () => widen(pi.session)), ...childTriesToWrite(nested)];
    const { receipt } = await callForReceipt(pi, "external_workflow", { script: outer }, { children });
    expect(receipt.ok).toBe(true);
    expect(pi.session.getActiveToolNames()).toContain("write");
    expect(nested.offered).not.toContain("write");
    expect(nested.result?.isError).toBe(true);
    expect(existsSync(join(pi.cwd, "pwned.txt"))).toBe(false);
    expect((await launchView(receipt.data.run!.output.value as string)).tools.withheld).toEqual(["bash", "edit", "write"]);
  });

  test("a nested workflow may not name in meta.tools a tool the parent gained after the outer call: its tools.write never runs", async () => {
    pi = await startPiSession();
    makeReadOnly(pi.session);
    const inner = 'export const meta = { tools: ["write"] };\nawait tools.write({ path: "pwned.txt", content: "x" });\nreturn "wrote";';
    const outer = [
      'export const meta = { tools: ["external_workflow"] };',
      'await agent({ role: "explorer", prompt: "First.", context: { mode: "none" } });',
      `const receipt = await tools.external_workflow({ script: ${JSON.stringify(inner)} });`,
      "return receipt.ok ? receipt.data.run.output.value : receipt.error;",
    ].join("\n");
    // The first child widens the parent before the nested workflow is launched.
    const children = [() => (widen(pi.session), fauxAssistantMessage([fauxText("done")]))];
    const { receipt } = await callForReceipt(pi, "external_workflow", { script: outer }, { children });
    expect(pi.session.getActiveToolNames()).toContain("write");
    expect(existsSync(join(pi.cwd, "pwned.txt"))).toBe(false);
    const refusal = receipt.data.run!.output.value as { code: string; message: string };
    expect(refusal.code).toBe("script_invalid");
    expect(refusal.message).toContain("meta.tools names write, which the outermost workflow call of this tree could not call");
  });
});

describe.each([
  { harness: "claude", readOnly: ["--permission-mode=plan", "--tools=Read,Grep,Glob,LS", "--disallowedTools=Bash,Edit,Write,NotebookEdit"] },
  { harness: "codex", readOnly: ["--sandbox=read-only"] },
])("a $harness worker of a read-only parent", ({ harness, readOnly }) => {
  test("by external_delegate: the CLI runs in its read-only mode and the receipt warns", async () => {
    pi = await startPiSession({ env: { PATH: pathWithFakes() } });
    makeReadOnly(pi.session);
    const { receipt } = await callForReceipt(pi, "external_delegate", cliTask(harness));
    expect(receipt).toMatchObject({ ok: true, warnings: ["tools_withheld"] });
    expect(fakeRuns(pi.cwd, harness)[0]!.argv).toEqual(expect.arrayContaining(readOnly));
  });

  test("by a workflow's agent(): the same read-only mode", async () => {
    pi = await startPiSession({ env: { PATH: pathWithFakes() } });
    makeReadOnly(pi.session);
    const script = `return (await agent({ role: "worker", harness: "${harness}", prompt: "Build it.", context: { mode: "none" } })).value;`;
    const { receipt } = await callForReceipt(pi, "external_workflow", { script });
    expect(receipt.ok).toBe(true);
    expect(fakeRuns(pi.cwd, harness)[0]!.argv).toEqual(expect.arrayContaining(readOnly));
  });
});

describe("a child's cwd", () => {
  test('"/" is refused for a writing child, even under a parent that holds bash', async () => {
    pi = await startPiSession();
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...worker, cwd: "/" });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid", message: expect.stringContaining("filesystem root") } });
  });

  test("outside the project is refused under a parent without bash, also through a link inside the project", async () => {
    pi = await startPiSession();
    makeReadOnly(pi.session);
    const outside = mkdtempSync(join(tmpdir(), "pi-flow-outside-"));
    symlinkSync(outside, join(pi.cwd, "link-out"));
    for (const cwd of [outside, "link-out", "/"]) {
      const { receipt } = await callForReceipt(pi, "external_delegate", { ...worker, role: "explorer", cwd });
      expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid", message: expect.stringContaining("outside this session's working directory") } });
    }
  });

  test("outside the project is allowed under a parent that holds bash, and inside it always", async () => {
    pi = await startPiSession({ env: { PATH: pathWithFakes() } });
    const outside = mkdtempSync(join(tmpdir(), "pi-flow-outside-"));
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...cliTask("codex"), cwd: outside });
    expect(receipt.ok).toBe(true);
    expect(fakeRuns(outside, "codex")[0]!.argv).toContain(`--cd=${outside}`);
    makeReadOnly(pi.session);
    mkdirSync(join(pi.cwd, "pkg"));
    const inside = await callForReceipt(pi, "external_delegate", { ...cliTask("codex"), cwd: "pkg" });
    expect(inside.receipt.ok).toBe(true);
  });
});
