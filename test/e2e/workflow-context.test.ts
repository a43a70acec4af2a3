import { afterEach, beforeEach, describe, expect, test } from "vitest";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import type { RunView } from "../../src/contract/run-schema.ts";
import { childAnswers, childAnswersWhenReleased, childHangs, type Seen } from "../support/children.ts";
import { callForReceipt, type Receipt } from "../support/receipts.ts";
import { startPiSession, type PiTestSession, type TurnScript } from "../support/pi-session.ts";
import { schemaViolation } from "../support/schema.ts";
import { journalOf } from "../support/journals.ts";


let pi: PiTestSession;
afterEach(() => pi.dispose());

const output = TOOL_SCHEMAS.external_workflow.output;

const workflow = (args: Record<string, unknown>, script: TurnScript = {}) => callForReceipt(pi, "external_workflow", args, script);

const agentCall = (description: string, prompt: string, context: string) =>
  `agent({ role: "reviewer", description: ${JSON.stringify(description)}, prompt: ${JSON.stringify(prompt)}, context: ${context} })`;

const completions = () => pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed");

describe("the frozen parent snapshot and independent siblings", () => {
  beforeEach(async () => {
    pi = await startPiSession();
    await pi.say("Remember: the codeword is PINEAPPLE.", "Noted the codeword.");
  });

  test("every child selects from the snapshot; a sibling never sees another's verdict unless the script passes it", async () => {
    const seen: Seen[] = [];
    const script = [
      `const a = await ${agentCall("first", "Review part A.", '{ mode: "full" }')};`,
      `const b = await ${agentCall("second", "Review part B.", '{ mode: "full" }')};`,
      `const c = await agent({ role: "reviewer", description: "third", prompt: "Reconcile. Earlier verdict: " + a.value, context: { mode: "none" } });`,
      `return [a.value, b.value, c.value];`,
    ].join("\n");
    const { receipt } = await workflow(
      { script },
      { children: [childAnswers("VERDICT-ALPHA", seen), childAnswers("VERDICT-BETA", seen), childAnswers("reconciled", seen)] },
    );
    expect(receipt.ok).toBe(true);
    const [a, b, c] = seen as [Seen, Seen, Seen];
    expect(a.user).toContain("PINEAPPLE");
    expect(b.user).toContain("PINEAPPLE");
    expect(b.all).not.toContain("VERDICT-ALPHA");
    expect(c.user).toContain("Earlier verdict: VERDICT-ALPHA");
    expect(c.all).not.toContain("PINEAPPLE");
    // The pending workflow call itself is not part of the snapshot: the task text appears once.
    expect(a.user.split("Review part A.")).toHaveLength(2);
    expect(a.user).not.toContain("[called external_workflow");
  });

  test("a background workflow keeps its snapshot while the parent moves on, and is waited on with external_runs", async () => {
    const seen: Seen[] = [];
    const gated = childAnswersWhenReleased("first done");
    const script = [
      `const a = await ${agentCall("first", "Step one.", '{ mode: "full" }')};`,
      `const b = await ${agentCall("second", "Step two.", '{ mode: "full" }')};`,
      // tools.* still reach the session after the launching call has returned.
      `const listed = await tools.external_runs({ action: "list" });`,
      `return { a: a.value, b: b.value, listed: listed.ok };`,
    ].join("\n");
    const { receipt, run, result } = await workflow({ script, background: true }, { children: [gated.step, childAnswers("second done", seen)] });
    expect(receipt.ok).toBe(true);
    expect(run!.state.status).not.toBe("done");
    expect(result.text).toMatch(/accepted in the background/);
    await gated.started;
    await pi.say("New fact: the codeword is now MANGO.", "Noted.");
    gated.release();
    const waited = await pi.callTool("external_runs", { action: "wait", runIds: [run!.runId] });
    expect(waited.structuredContent).toMatchObject({
      ok: true,
      data: { completed: [{ runId: run!.runId, kind: "workflow", state: { outcome: "succeeded" }, children: { count: 2, failed: 0 } }], pending: [] },
    });
    const value = (waited.structuredContent as { data: { completed: RunView[] } }).data.completed[0]!.output.value;
    expect(value).toEqual({ a: "first done", b: "second done", listed: true });
    expect(seen[0]!.user).toContain("PINEAPPLE");
    expect(seen[0]!.user).not.toContain("MANGO");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(completions()).toHaveLength(0);
  });
  test("the snapshot is the parent as it was when the workflow started, even when no child asked for it until later", async () => {
    const seen: Seen[] = [];
    const gated = childAnswersWhenReleased("first done");
    const script = [
      `const a = await ${agentCall("first", "Step one.", '{ mode: "none" }')};`,
      `const b = await ${agentCall("second", "Step two.", '{ mode: "full" }')};`,
      `return { a: a.value, b: b.value };`,
    ].join("\n");
    const { run } = await workflow({ script, background: true }, { children: [gated.step, childAnswers("second done", seen)] });
    await gated.started;
    await pi.say("New fact: the codeword is now MANGO.", "Noted.");
    gated.release();
    await pi.callTool("external_runs", { action: "wait", runIds: [run!.runId] });
    expect(seen[0]!.user).toContain("PINEAPPLE");
    expect(seen[0]!.user).not.toContain("MANGO");
  });

  test("a child started through tools.external_delegate selects from the same frozen snapshot", async () => {
    const seen: Seen[] = [];
    const gated = childAnswersWhenReleased("first done");
    const script = [
      `const a = await ${agentCall("first", "Step one.", '{ mode: "full" }')};`,
      `const b = await tools.external_delegate({ role: "explorer", description: "second", prompt: "Step two.", context: { mode: "full" } });`,
      `return { a: a.value, b: b.data.run.output.value };`,
    ].join("\n");
    const source = `export const apiVersion = 1;\nexport const meta = { name: "via-tools", description: "d", tools: ["external_delegate"] };\n${script}`;
    const { receipt, run } = await workflow({ script: source, background: true }, { children: [gated.step, childAnswers("second done", seen)] });
    expect(receipt.ok).toBe(true);
    await gated.started;
    await pi.say("New fact: the codeword is now MANGO.", "Noted.");
    gated.release();
    const waited = await pi.callTool("external_runs", { action: "wait", runIds: [run!.runId] });
    const value = (waited.structuredContent as { data: { completed: RunView[] } }).data.completed[0]!.output.value;
    expect(value).toEqual({ a: "first done", b: "second done" });
    expect(seen[0]!.user).toContain("PINEAPPLE");
    expect(seen[0]!.user).not.toContain("MANGO");
    expect(seen[0]!.user).not.toContain("[called external_workflow");
  });
});

describe("calls, tools and nesting", () => {
  const blockHelp = (pi: ExtensionAPI) => {
    pi.on("tool_call", (event) => (event.toolName === "external_help" ? { block: true, reason: "help is blocked by policy" } : undefined));
  };
  beforeEach(async () => {
    pi = await startPiSession({ extensions: [blockHelp] });
  });

  test("a workflow started from a codemode script gets exactly the envelope of a direct call", async () => {
    const inline = `const r = await agent({ role: "explorer", description: "d", prompt: "List the parsers." });\nreturn r.value;`;
    const outcome = await pi.runCodemode(
      `const good = await tools.external_workflow({ script: ${JSON.stringify(inline)} });
       const bad = await tools.external_workflow({ workflow: "no-such-flow" });
       return { good, bad };`,
      { children: [childAnswers("parser-a, parser-b")] },
    );
    const { good, bad } = outcome.value as { good: Receipt; bad: Receipt };
    expect(schemaViolation(output, good)).toBeNull();
    expect(schemaViolation(output, bad)).toBeNull();
    expect(good).toMatchObject({ ok: true, action: "run", tool: "external_workflow", data: { run: { kind: "workflow", output: { value: "parser-a, parser-b" } } } });
    expect(bad).toMatchObject({ ok: false, data: { run: null }, error: { code: "selection_invalid" } });
  });

  test("tools.* go through the session's executeTool: structured results, Pi's hooks, meta.tools plus Flow's read-only tools", async () => {
    const script = [
      `export const meta = { tools: ["external_delegate"] };`,
      `const listed = await tools.external_runs({ action: "list" });`,
      `const delegated = await tools.external_delegate({ role: "explorer", description: "d", prompt: "p", context: { mode: "none" } });`,
      `let blocked = null;`,
      `try { await tools.external_help({ topic: "workflows" }); } catch (error) { blocked = { code: error.code, message: error.message }; }`,
      `return { available: Object.keys(tools), listed: listed.ok, delegated: delegated.data.run.output.value, blocked };`,
    ].join("\n");
    const { receipt, run } = await workflow({ script }, { children: [childAnswers("delegated answer")] });
    expect(receipt.ok).toBe(true);
    expect(run!.output.value).toEqual({
      available: ["external_delegate", "external_help", "external_runs"],
      listed: true,
      delegated: "delegated answer",
      blocked: { code: "tool_failed", message: expect.stringContaining("help is blocked by policy") },
    });
  });

  test("meta.tools naming a tool the session cannot call is script_invalid, and nothing is launched", async () => {
    const { receipt } = await workflow({ script: `// checks\n  export const meta = { tools: ["no_such_tool"] };\nreturn 1;` });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "script_invalid" } });
    expect(receipt.error!.message).toMatch(/no_such_tool/);
    expect(receipt.error!.message).toMatch(/\(inline\.js, line 2, column 3\)/);
    const badArgs = await workflow({ script: `export const meta = { args: { type: "object", properties: { id: { type: "string", pattern: "(" } } } };\nreturn 1;` });
    expect(badArgs.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "script_invalid" } });
    expect(badArgs.receipt.error!.message).toMatch(/meta\.args .*\(inline\.js, line 1, column 1\)/);
  });

  test("a background workflow's tools.* call never blocks the parent's own delegations", async () => {
    let hung!: () => void;
    const childHung = new Promise<void>((resolve) => (hung = resolve));
    const script = `export const meta = { tools: ["external_delegate"] };\nreturn await tools.external_delegate({ role: "explorer", description: "hangs", prompt: "Wait." });`;
    const { run } = await workflow({ script, background: true }, { children: [childHangs(hung)] });
    await childHung;
    const outcome = await pi.runCodemode(
      `const r = await tools.external_delegate({ role: "explorer", description: "quick", prompt: "Answer." }); return r.data.run.output.value;`,
      { children: [childAnswers("quick answer")] },
    );
    expect(outcome.value).toBe("quick answer");
    await pi.callTool("external_runs", { action: "cancel", runIds: [run!.runId] });
    // The workflow's delegation is its child, and cancelling the workflow stops it through its call.
    const agents = async () => ((await pi.callTool("external_runs", { action: "list" })).structuredContent as { data: { runs: RunView[] } }).data.runs;
    const hangs = (await agents()).find((agent) => agent.task.description === "hangs")!;
    await pi.callTool("external_runs", { action: "wait", runIds: [run!.runId, hangs.runId] });
    const settled = await agents();
    expect(settled.find((agent) => agent.runId === hangs.runId)).toMatchObject({ task: { parentRunId: run!.runId }, correlationId: run!.runId, state: { outcome: "cancelled" } });
    expect(settled.find((agent) => agent.task.description === "quick")?.task.parentRunId).toBeUndefined();
  });

  test("external_runs reads from any workflow, but acts on runs only from one whose meta.tools names it", async () => {
    const acts = `const listed = await tools.external_runs({ action: "list" });
      const cancel = await tools.external_runs({ action: "cancel", runIds: ["wf_0mx5test0_0000000001"] });
      return { listed: listed.ok, cancel: cancel.ok ? "done" : cancel.error };`;
    const undeclared = await workflow({ script: acts });
    expect(undeclared.run!.output.value).toEqual({
      listed: true,
      cancel: { code: "request_invalid", message: "tools.external_runs cancel acts on runs: name external_runs in meta.tools to let this workflow do that (without it, a workflow may list, inspect and wait)." },
    });
    // Declared, the cancel reaches external_runs, which answers for itself (here: no such run).
    const declared = await workflow({ script: `export const meta = { tools: ["external_runs"] };\n${acts}` });
    expect(declared.run!.output.value).toMatchObject({ listed: true, cancel: { code: "run_unavailable" } });
  });

  test("a workflow may start a workflow (depth 2), but not one level deeper", async () => {
    const deepest = `return "too deep";`;
    const inner = `export const meta = { tools: ["external_workflow"] };\nconst r = await tools.external_workflow({ script: ${JSON.stringify(deepest)} });\nreturn { code: r.error.code, message: r.error.message };`;
    const outer = `export const meta = { tools: ["external_workflow"] };\nconst r = await tools.external_workflow({ script: ${JSON.stringify(inner)} });\nreturn { ok: r.ok, parent: r.data.run.task.parentRunId, value: r.data.run.output.value };`;
    const { receipt, run } = await workflow({ script: outer });
    expect(receipt.ok).toBe(true);
    expect(run!.output.value).toEqual({
      ok: true,
      parent: run!.runId,
      value: { code: "request_invalid", message: expect.stringMatching(/depth 2/) },
    });
  });
});

describe("a tree of workflows within its root's bounds", () => {
  beforeEach(async () => {
    pi = await startPiSession();
  });

  test("a nested workflow's agent() calls count against the root's agentCalls: the call past them fails the nested run", async () => {
    const inner = `await agent({ role: "explorer", description: "inner one", prompt: "p" });\nawait agent({ role: "explorer", description: "inner two", prompt: "p" });\nreturn "both";`;
    const outer = [
      `export const meta = { tools: ["external_workflow"], limits: { agentCalls: 2 } };`,
      `await agent({ role: "explorer", description: "outer", prompt: "p" });`,
      `const r = await tools.external_workflow({ script: ${JSON.stringify(inner)} });`,
      `return { ok: r.ok, code: r.error?.code, message: r.error?.message, children: r.data.run.children.count };`,
    ].join("\n");
    const { receipt, run } = await workflow({ script: outer }, { children: [childAnswers("outer done"), childAnswers("inner done")] });
    expect(receipt.ok).toBe(true);
    // The nested run's own limit (the default, 32) would have let it make both calls.
    expect(run!.output.value).toEqual({
      ok: false,
      code: "failed",
      // The nested script's second agent() call, which the tree refused.
      message: "agent call limit of the root workflow (2) reached by the workflows of its tree together (limit agentCalls) at line 2, column 12",
      children: 1,
    });
  });

  test("nested workflows share one memory budget: one that does not fit waits for its sibling, says so in its journal, then runs", async () => {
    const nested = (label: string) =>
      `export const meta = { limits: { memoryBytes: ${480 * 1024 * 1024} } };\nreturn (await agent({ role: "explorer", description: ${JSON.stringify(label)}, prompt: "p" })).value;`;
    const outer = [
      `export const meta = { tools: ["external_workflow"] };`,
      `const runs = await parallel([() => tools.external_workflow({ script: ${JSON.stringify(nested("left"))} }), () => tools.external_workflow({ script: ${JSON.stringify(nested("right"))} })]);`,
      `return runs.map((r) => ({ value: r.data.run.output.value, runId: r.data.run.runId }));`,
    ].join("\n");
    const { receipt, run } = await workflow({ script: outer }, { children: [childAnswers("one"), childAnswers("two")] });
    expect(receipt.ok).toBe(true);
    const runs = run!.output.value as { value: string; runId: string }[];
    expect(runs.map((r) => r.value).sort()).toEqual(["one", "two"]);
    const waits = runs.map((r) => journalOf(pi.flowHome, r.runId).filter((line) => line.name === "heap_wait"));
    // The first to ask holds 544 MiB (its 480 and its worker's 64 of room) of the tree's 1 GiB; the other waited for it, once.
    expect(waits.map((lines) => lines.length).sort()).toEqual([0, 1]);
    expect(waits.flat()[0]).toMatchObject({ t: "event", data: { bytes: 544 * 1024 * 1024 } });
  });
});

describe("progress and cancellation", () => {
  beforeEach(async () => {
    pi = await startPiSession();
  });

  test("a foreground run streams which children run and which finished", async () => {
    const updates: string[] = [];
    pi.session.subscribe((event) => {
      if (event.type !== "tool_execution_update" || event.toolName !== "external_workflow") return;
      const content = (event.partialResult as { content?: { text?: string }[] }).content ?? [];
      updates.push(content.map((part) => part.text ?? "").join(""));
    });
    const script = `await ${agentCall("alpha", "p", '{ mode: "none" }')};\nawait ${agentCall("beta", "p", '{ mode: "none" }')};\nreturn 1;`;
    await workflow({ script }, { children: [childAnswers("a"), childAnswers("b")] });
    expect(updates.some((text) => text.includes("1 running, 0 finished: alpha (running)"))).toBe(true);
    expect(updates.some((text) => text.includes("1 running, 1 finished: beta (running), alpha (succeeded)"))).toBe(true);
    expect(updates.some((text) => text.includes("0 running, 2 finished"))).toBe(true);
  });

  test("the parent's abort stops the root and every foreground child: ok:false cancelled, with the run", async () => {
    const started: Promise<void>[] = [];
    const steps = [0, 1].map(() => {
      let mark!: () => void;
      started.push(new Promise<void>((resolve) => (mark = resolve)));
      return childHangs(() => mark());
    });
    const script = `return await parallel([() => ${agentCall("left", "p", '{ mode: "none" }')}, () => ${agentCall("right", "p", '{ mode: "none" }')}]);`;
    const call = workflow({ script }, { children: steps });
    await Promise.all(started);
    await pi.session.abort();
    const { receipt, run } = await call;
    expect(receipt).toMatchObject({ ok: false, error: { code: "cancelled" } });
    expect(run).toMatchObject({ live: false, state: { status: "done", outcome: "cancelled" }, children: { count: 2 } });
    const summary = await pi.callTool("external_runs", { action: "list" });
    const agents = (summary.structuredContent as { data: { runs: RunView[] } }).data.runs;
    expect(agents.map((child) => child.state.outcome)).toEqual(["cancelled", "cancelled"]);
  });

  test("cancelling a background workflow with external_runs stops its children and ends it cancelled", async () => {
    let mark!: () => void;
    const started = new Promise<void>((resolve) => (mark = resolve));
    const script = `return await ${agentCall("slow", "p", '{ mode: "none" }')};`;
    const { run } = await workflow({ script, background: true }, { children: [childHangs(() => mark())] });
    await started;
    const cancel = await pi.callTool("external_runs", { action: "cancel", runIds: [run!.runId] });
    expect(cancel.isError).toBe(false);
    const waited = await pi.callTool("external_runs", { action: "wait", runIds: [run!.runId] });
    expect(waited.structuredContent).toMatchObject({ ok: true, data: { completed: [{ state: { outcome: "cancelled" } }] } });
  });
});
