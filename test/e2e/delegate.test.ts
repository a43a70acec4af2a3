import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { fauxAssistantMessage, fauxText, type FauxResponseStep } from "@earendil-works/pi-ai";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import { childAnswers, childAnswersWhenReleased, childHangs, childModelFails, type Seen } from "../support/children.ts";
import { startPiSession, type PiTestSession, type TurnScript } from "../support/pi-session.ts";
import { callForReceipt, type Receipt } from "../support/receipts.ts";
import { schemaViolation } from "../support/schema.ts";
import type { RunView } from "../../src/contract/run-schema.ts";

type Run = {
  runId: string;
  kind: string;
  live: boolean;
  state: { status: string; outcome: string | null; error?: { code: string; message: string } };
  output: { delivery: string; value?: unknown; finalAvailable: boolean; redacted?: boolean };
  refs: { final?: Record<string, unknown>; diagnostics?: Record<string, unknown>; summary: Record<string, unknown> };
};

let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
});
afterEach(() => pi.dispose());

const output = TOOL_SCHEMAS.external_delegate.output;
const worker = { role: "worker", description: "Check build", prompt: "Run the build and report.", context: { mode: "none" } };

const delegate = (args: Record<string, unknown>, script: TurnScript = {}) => callForReceipt(pi, "external_delegate", args, script);

/**
 * A provider parses a tool call's arguments from the model's text, however deep; Pi's faux provider
 * copies its scripted message first, which overflows at about 2,000 levels. So the faux call carries
 * `placeholder` and gets `value` once the arguments are whole, as a real provider's parser hands them over.
 */
function streamArgumentAs(session: PiTestSession, placeholder: string, value: unknown): void {
  type EventStream = { push(event: { type: string; toolCall?: { arguments: Record<string, unknown> } }): void };
  const provider = session.faux.provider as unknown as Record<"stream" | "streamSimple", (...args: unknown[]) => EventStream>;
  for (const name of ["stream", "streamSimple"] as const) {
    const original = provider[name];
    provider[name] = (...args) => {
      const stream = original(...args);
      const push = stream.push.bind(stream);
      stream.push = (event) => {
        const call = event.type === "toolcall_end" ? event.toolCall : undefined;
        for (const [key, argument] of Object.entries(call?.arguments ?? {})) if (argument === placeholder) call!.arguments[key] = value;
        push(event);
      };
      return stream;
    };
  }
}

describe("external_delegate in the foreground", () => {
  test("a child that answers succeeds: ok, outcome succeeded, the answer inline, the run ID in the content", async () => {
    const { result, receipt } = await delegate(worker, { children: [childAnswers("Build passes: 12 modules.")] });
    expect(receipt.ok).toBe(true);
    const run = receipt.data.run!;
    expect(run).toMatchObject({ kind: "agent", live: false, state: { status: "done", outcome: "succeeded" } });
    expect(run.output).toMatchObject({ delivery: "inline", value: "Build passes: 12 modules.", finalAvailable: true });
    expect(result.text).toContain(run.runId);
    expect(result.text).toContain("succeeded");
    expect(result.text).toContain("Build passes: 12 modules.");
  });

  test("a foreground child streams its progress through onUpdate, then the result settles", async () => {
    const updates: { phase?: string; progress?: { activity: string; usage: { turns: number } } }[] = [];
    const unsubscribe = pi.session.subscribe((event) => {
      if (event.type === "tool_execution_update" && event.toolName === "external_delegate") updates.push(event.partialResult.details);
    });
    await delegate(worker, { children: [childAnswers("done")] });
    unsubscribe();
    expect(updates.some((details) => details.phase === "running")).toBe(true);
    expect(updates.some((details) => details.progress?.activity === "thinking")).toBe(true);
    expect(updates.some((details) => (details.progress?.usage.turns ?? 0) >= 1)).toBe(true);
  });

  test("a child whose model fails: ok:false, code failed, and the run keeps its evidence", async () => {
    const { result, receipt } = await delegate(worker, { children: [childModelFails("provider exploded")] });
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed", message: expect.stringContaining("provider exploded") } });
    const run = receipt.data.run!;
    expect(run.state).toMatchObject({ status: "done", outcome: "failed" });
    expect(run.output.finalAvailable).toBe(false);
    expect(result.text).toContain(run.runId);
    expect(run.refs.diagnostics).toEqual({ action: "inspect", runIds: [run.runId], view: "diagnostics" });
  });

  test("an empty answer, or one cut off at the model's output limit, is a failure that says which, never an ok receipt", async () => {
    const { receipt } = await delegate(worker, { children: [childAnswers("   ")] });
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed", message: "The child's model ended its reply with no text: there is no answer." } });
    expect(receipt.data.run!.output.delivery).toBe("none");
    // The faux model's limit is 16,384 output tokens; this reply is counted past it.
    const cut = await delegate(worker, { children: [() => fauxAssistantMessage([fauxText("x".repeat(70_000))], { stopReason: "length" })] });
    expect(cut.receipt).toMatchObject({ ok: false, error: { code: "failed", message: expect.stringContaining("cut off at its model's output limit of 16384 tokens (faux/faux-1)") } });
    expect(cut.receipt.data.run!.output.delivery).toBe("none");
  });

  test("an unknown role is selection_invalid with data.run null, and nothing is launched", async () => {
    const { result, receipt } = await delegate({ ...worker, role: "nonexistent_role" });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "selection_invalid" } });
    expect(result.text).toContain("selection_invalid");
    expect(() => readdirSync(pi.flowHome)).toThrow();
  });

  test.each([
    [{ harness: "gemini" }, "selection_invalid"],
    [{ model: "faux/no-such-model" }, "model_unavailable"],
    [{ context: { mode: "recent" } }, "validation"],
    [{ cwd: "does/not/exist" }, "request_invalid"],
    // A schema no answer can satisfy is malformed: refused before a child is paid for.
    [{ outputSchema: { type: "bogus" } }, "request_invalid"],
    [{ outputSchema: { type: "object", properties: { verdict: { type: "strng" } } } }, "request_invalid"],
    [{ outputSchema: { anyOf: [{ type: "string" }, { type: ["number", "float"] }] } }, "request_invalid"],
    // Past MAX_SCHEMA_DEPTH (256 levels): deep enough to overflow the checker's stack further on.
    [{ outputSchema: JSON.parse(`${'{"type":"array","items":'.repeat(300)}{}${"}".repeat(300)}`) }, "request_invalid"],
  ])("%j is rejected before launch with %s", async (extra, code) => {
    const result = await pi.callTool("external_delegate", { ...worker, ...extra });
    expect(result.isError).toBe(true);
    if (code === "validation") expect(result.text).toMatch(/Validation failed/);
    else expect(result.structuredContent).toMatchObject({ ok: false, data: { run: null }, error: { code } });
  });

  test("an outputSchema nested 2,500 levels deep is refused quoting pi-flow's note, and the session's next turns still reach the model", async () => {
    // Pi failed every later turn of the session with "Maximum call stack size exceeded": it copies the conversation before each request.
    const deep = JSON.parse(`${'{"type":"array","items":'.repeat(2_500)}{}${"}".repeat(2_500)}`) as Record<string, unknown>;
    streamArgumentAs(pi, "DEEP", deep);
    const result = await pi.callTool("external_delegate", { ...worker, outputSchema: "DEEP" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/outputSchema[\s\S]*more than 1000 levels deep, which Pi cannot copy \(MAX_ARGUMENT_DEPTH\)/);
    await pi.say("hello again", "still here");
    expect(pi.session.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop", content: [{ type: "text", text: "still here" }] });
  });

  test("a rejection quoting a secret in its input reaches the model and the envelope redacted", async () => {
    const secret = "sk-ant-api03-" + "K".repeat(40);
    const result = await pi.callTool("external_delegate", { ...worker, cwd: `keys/${secret}` });
    expect(result.structuredContent).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid", message: expect.stringContaining("[REDACTED]") } });
    expect(result.text).toContain("is not a directory");
    expect(JSON.stringify(result.structuredContent)).not.toContain(secret);
    expect(result.text).not.toContain(secret);
  });

  test("an outputSchema whose const or enum values hold a type key is still a usable schema", async () => {
    const outputSchema = { type: "object", properties: { kind: { const: { type: "bogus" } }, tags: { enum: [{ type: "x" }] } }, required: ["kind"] };
    const { receipt } = await delegate({ ...worker, outputSchema }, { children: [childAnswers('{"kind":{"type":"bogus"}}')] });
    expect(receipt).toMatchObject({ ok: true, data: { run: { output: { delivery: "inline", value: { kind: { type: "bogus" } } } } } });
  });

  test("an answer holding an integer past 2^53 (a 64-bit ID) fails naming it, instead of delivering a neighbouring number", async () => {
    const outputSchema = { type: "object", properties: { id: { type: "integer" } }, required: ["id"] };
    const { receipt } = await delegate({ ...worker, outputSchema }, { children: [childAnswers('{"id": 12345678901234567891}')] });
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed", message: expect.stringContaining("12345678901234567891, which a JSON number here cannot hold exactly (it reads as 12345678901234567000)") } });
  });

  test("a bad context that passes the schema is context_invalid", async () => {
    const result = await pi.callTool("external_delegate", { ...worker, context: { mode: "recent", turns: 5000 } });
    expect(result.structuredContent).toMatchObject({ ok: false, data: { run: null }, error: { code: "context_invalid" } });
  });

  test("a blank prompt or description is request_invalid: nothing is launched and no model is asked", async () => {
    let asked = 0;
    const answer = childAnswers("an answer to nothing");
    const counted: FauxResponseStep = (...args) => {
      asked++;
      return typeof answer === "function" ? answer(...args) : answer;
    };
    for (const blank of [{ prompt: " \n\t " }, { description: "   " }]) {
      const result = await pi.callTool("external_delegate", { ...worker, ...blank }, { children: [counted] });
      expect(result.structuredContent).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
      expect(result.text).toMatch(/blank/);
    }
    // agent() takes the same options: its blank prompt is refused the same way, as a failed call the script can catch.
    const workflow = await pi.callTool("external_workflow", {
      script: 'try { await agent({ role: "worker", prompt: "   " }); } catch (error) { return error.code ?? String(error); } return "launched";',
    }, { children: [counted] });
    expect((workflow.structuredContent as { data: { run: { output: { value: unknown } } } }).data.run.output.value).toBe("request_invalid");
    expect(asked).toBe(0);
    const listed = await pi.callTool("external_runs", { action: "list" });
    expect((listed.structuredContent as { data: { runs: unknown[] } }).data.runs).toEqual([]);
  });

  test("role with subagent_type, and subagent_type with harness, fail Pi's validation before execute", async () => {
    for (const extra of [{ subagent_type: "scout" }, { role: undefined, subagent_type: "scout", harness: "pi" }]) {
      const result = await pi.callTool("external_delegate", { ...worker, ...extra });
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/must not match the schema in not/);
    }
  });
});

describe("subagent_type", () => {
  test("runs a Pi agent definition on the pi harness, with its prompt, and Pi's default tools when it names none", async () => {
    mkdirSync(join(pi.cwd, ".pi", "agents"), { recursive: true });
    writeFileSync(join(pi.cwd, ".pi", "agents", "helper.md"), "---\nname: helper\ndescription: Helps\n---\nYou are HELPER-AGENT-PROMPT.");
    writeFileSync(join(pi.cwd, ".pi", "agents", "scout.md"), "---\nname: scout\ndescription: Scouts\ntools: read, grep\n---\nYou are a scout.");
    const seen: Seen[] = [];
    const { receipt } = await delegate(
      { subagent_type: "helper", description: "Help", prompt: "Help out." },
      { children: [childAnswers("helped", seen)] },
    );
    expect(receipt).toMatchObject({ ok: true, data: { run: { task: { subagentType: "helper", harness: "pi" } } } });
    expect(seen[0]!.system).toContain("HELPER-AGENT-PROMPT");
    const tools = (system: string) => ["read", "bash", "edit", "write", "grep"].filter((tool) => new RegExp(`\\b${tool}\\b`).test(system));
    expect(tools(seen[0]!.system)).toEqual(expect.arrayContaining(["read", "bash", "edit", "write"]));
    await delegate({ subagent_type: "scout", description: "Scout", prompt: "Scout." }, { children: [childAnswers("scouted", seen)] });
    expect(tools(seen[1]!.system)).not.toContain("bash");
  });
});

describe("context modes: a child sees the parent's words only when its mode asks for them", () => {
  beforeEach(async () => {
    await pi.say("Remember: the codeword is PINEAPPLE.", "Noted the codeword.");
    await pi.say("Also, the build target is arm64.", "Noted the target.");
  });

  test("none: only the prompt", async () => {
    const seen: Seen[] = [];
    await delegate(worker, { children: [childAnswers("ok", seen)] });
    expect(seen[0]!.user).toContain("Run the build and report.");
    expect(seen[0]!.all).not.toContain("PINEAPPLE");
    expect(seen[0]!.all).not.toContain("arm64");
  });

  test("recent N: the last N turns, the current request counting as one", async () => {
    const seen: Seen[] = [];
    await delegate({ ...worker, context: { mode: "recent", turns: 1 } }, { children: [childAnswers("ok", seen)] });
    expect(seen[0]!.user).toContain("call external_delegate");
    expect(seen[0]!.user).not.toContain("arm64");
    await delegate({ ...worker, context: { mode: "recent", turns: 3 } }, { children: [childAnswers("ok", seen)] });
    expect(seen[1]!.user).toContain("arm64");
    expect(seen[1]!.user).not.toContain("PINEAPPLE");
  });

  test("full: every turn, and never the pending delegate call itself", async () => {
    const seen: Seen[] = [];
    await delegate({ ...worker, prompt: "UNIQUE-TASK-TEXT", context: { mode: "full" } }, { children: [childAnswers("ok", seen)] });
    expect(seen[0]!.user).toContain("PINEAPPLE");
    expect(seen[0]!.user).toContain("arm64");
    // The task appears once, as the task: not again as quoted pending call arguments.
    expect(seen[0]!.user.split("UNIQUE-TASK-TEXT")).toHaveLength(2);
    expect(seen[0]!.user).not.toContain("[called external_delegate");
  });

  test("a role's default context applies when none is given (worker: recent 2, explorer: none)", async () => {
    const seen: Seen[] = [];
    const { context: _omit, ...noContext } = worker;
    await delegate(noContext, { children: [childAnswers("ok", seen)] });
    expect(seen[0]!.user).toContain("arm64");
    expect(seen[0]!.user).not.toContain("PINEAPPLE");
    await delegate({ ...noContext, role: "explorer" }, { children: [childAnswers("ok", seen)] });
    expect(seen[1]!.user).not.toContain("arm64");
  });
});

describe("abort, background and delivery", () => {
  test("aborting the parent stops a foreground child: the run ends cancelled, its evidence kept", async () => {
    let started!: () => void;
    const childStarted = new Promise<void>((resolve) => (started = resolve));
    const call = pi.callTool("external_delegate", worker, { children: [childHangs(started)] });
    await childStarted;
    await pi.session.abort();
    const result = await call;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      ok: false,
      error: { code: "cancelled" },
      data: { run: { live: false, state: { status: "done", outcome: "cancelled" } } },
    });
  });

  test("a child that outlives timeoutMs ends timed_out, with its evidence kept", async () => {
    const { result, receipt } = await delegate({ ...worker, timeoutMs: 1000 }, { children: [childHangs()] });
    expect(receipt).toMatchObject({
      ok: false,
      error: { code: "timed_out" },
      data: { run: { live: false, state: { status: "done", outcome: "timed_out" } } },
    });
    expect(result.text).toContain("timed_out");
  });

  test("background: ok once accepted, not finished; later exactly one completion message", async () => {
    const gated = childAnswersWhenReleased("background answer");
    const { result, receipt } = await delegate({ ...worker, background: true }, { children: [gated.step] });
    expect(receipt.ok).toBe(true);
    const run = receipt.data.run!;
    expect(run.state.status).not.toBe("done");
    expect(run.live).toBe(true);
    expect(result.text).toMatch(/accepted in the background/);
    expect(result.text).toContain(`"action":"wait"`);
    await gated.started;
    const completions = () =>
      pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed");
    expect(completions()).toHaveLength(0);
    gated.release();
    await expect.poll(() => completions().length).toBe(1);
    const message = completions()[0] as unknown as { content: string; details: Run };
    expect(message.content).toContain(run.runId);
    expect(message.details).toMatchObject({ runId: run.runId, state: { outcome: "succeeded" } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(completions()).toHaveLength(1);
  });

  test("a background run past the session's slots is queued, and its receipt says so", async () => {
    await pi.dispose();
    pi = await startPiSession({ env: { PI_FLOW_MAX_BACKGROUND: "1" } });
    const first = childAnswersWhenReleased("first");
    const running = await delegate({ ...worker, background: true }, { children: [first.step] });
    await first.started;
    const queued = await delegate({ ...worker, background: true }, { children: [childAnswers("second")] });
    expect(running.result.text).toMatch(/accepted in the background \(not finished\)/);
    expect(queued.receipt.data.run!.state.status).toBe("queued");
    expect(queued.result.text).toMatch(/queued in the background: it starts when a background slot frees \(not started\)/);
    first.release();
  });

  test("the tool descriptions state the cancellation scope", () => {
    for (const name of ["external_delegate", "external_workflow"]) {
      const tool = pi.session.getAllTools().find((candidate) => candidate.name === name);
      expect(tool?.description ?? "").toMatch(/Cancelling this call stops a foreground .*; a background .* outlives the call and stops only through external_runs cancel/);
    }
  });

  test("a reload keeps background runs going: the completion message still arrives, once", async () => {
    const gated = childAnswersWhenReleased("survived the reload");
    const { receipt } = await delegate({ ...worker, background: true }, { children: [gated.step] });
    const runId = receipt.data.run!.runId;
    await gated.started;
    await pi.session.reload();
    gated.release();
    const completions = () => pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed");
    await expect.poll(() => completions().length).toBe(1);
    expect((completions()[0] as unknown as { details: Run }).details).toMatchObject({ runId, state: { outcome: "succeeded" } });
    const waited = await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
    expect(waited.structuredContent).toMatchObject({ ok: true, data: { completed: [{ runId, state: { outcome: "succeeded" } }] } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(completions()).toHaveLength(1);
  });

  test("an answer over 16 KiB is delivered by reference, never truncated", async () => {
    const big = "x".repeat(20 * 1024);
    const { receipt, result } = await delegate(worker, { children: [childAnswers(big)] });
    const run = receipt.data.run!;
    expect(receipt.ok).toBe(true);
    expect(run.output).toMatchObject({ delivery: "reference", finalAvailable: true });
    expect(run.output.value).toBeUndefined();
    expect(run.refs.final).toEqual({ action: "inspect", runIds: [run.runId], view: "final" });
    expect(result.text.length).toBeLessThan(2000);
    expect(result.text).toContain("too large to inline");
  });

  test("a secret in an answer is redacted, with the output_redacted warning", async () => {
    const secret = "sk-ant-api03-" + "A".repeat(40);
    const { receipt, result } = await delegate(worker, { children: [childAnswers(`The key is ${secret} in .env`)] });
    expect(receipt.ok).toBe(true);
    expect(receipt.warnings).toContain("output_redacted");
    expect(JSON.stringify(receipt)).not.toContain(secret);
    expect(result.text).not.toContain(secret);
    expect(String(receipt.data.run!.output.value)).toContain("in .env");
    // The run view's output says so too (output.redacted, a listed addition).
    expect(receipt.data.run!.output).toMatchObject({ delivery: "inline", redacted: true });
    // Every later view of that run that inlines the value carries the same warning.
    for (const args of [{ action: "list" }, { action: "inspect", runIds: [receipt.data.run!.runId] }, { action: "wait", runIds: [receipt.data.run!.runId] }]) {
      const later = await pi.callTool("external_runs", args);
      expect((later.structuredContent as { warnings: string[] }).warnings, args.action).toContain("output_redacted");
      expect(later.text).not.toContain(secret);
    }
  });
});

describe("external_delegate from native codemode", () => {
  test("a script receives the same envelope as a direct call, for a success and for a typed failure", async () => {
    const outcome = await pi.runCodemode(
      `
      const good = await tools.external_delegate({ role: "explorer", description: "List parsers", prompt: "List the parsers." });
      const bad = await tools.external_delegate({ role: "nonexistent_role", description: "x", prompt: "y" });
      return { good, bad };`,
      { children: [childAnswers("parser-a, parser-b")] },
    );
    const { good, bad } = outcome.value as { good: Receipt; bad: Receipt };
    expect(schemaViolation(output, good)).toBeNull();
    expect(good).toMatchObject({ ok: true, data: { run: { state: { outcome: "succeeded" }, output: { value: "parser-a, parser-b" } } } });
    expect(bad).toMatchObject({ ok: false, data: { run: null }, error: { code: "selection_invalid" } });
  });

  test("a failed child comes back as ok:false with its run; nothing throws in the script", async () => {
    const outcome = await pi.runCodemode(
      `const r = await tools.external_delegate({ role: "worker", description: "d", prompt: "p", context: { mode: "none" } });
       return { ok: r.ok, code: r.error?.code, outcome: r.data.run?.state.outcome };`,
      { children: [childModelFails("provider exploded")] },
    );
    expect(outcome.value).toEqual({ ok: false, code: "failed", outcome: "failed" });
  });

  test("a background delegation from a script is accepted, and its completion still arrives once", async () => {
    const gated = childAnswersWhenReleased("done in background");
    const outcome = await pi.runCodemode(
      `const r = await tools.external_delegate({ role: "explorer", description: "bg", prompt: "p", background: true });
       return { ok: r.ok, status: r.data.run.state.status, runId: r.data.run.runId };`,
      { children: [gated.step] },
    );
    const { ok, status, runId } = outcome.value as { ok: boolean; status: string; runId: string };
    expect(ok).toBe(true);
    expect(status).not.toBe("done");
    gated.release();
    const completions = () => pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed");
    await expect.poll(() => completions().length).toBe(1);
    expect((completions()[0] as unknown as { details: Run }).details.runId).toBe(runId);
  });

  test("from a script: empty answers, context modes, large and secret answers behave as in direct calls", async () => {
    await pi.say("Remember: the codeword is PINEAPPLE.", "Noted.");
    const seen: Seen[] = [];
    const secret = "ghp_" + "B".repeat(36);
    const outcome = await pi.runCodemode(
      `
      const call = (prompt, context) => tools.external_delegate({ role: "worker", description: "d", prompt, context });
      const empty = await call("Say nothing.", { mode: "none" });
      const none = await call("No context.", { mode: "none" });
      const full = await call("Full context.", { mode: "full" });
      const big = await call("Write a lot.", { mode: "none" });
      const secretive = await call("Leak.", { mode: "none" });
      return {
        empty: [empty.ok, empty.error?.code],
        big: [big.ok, big.data.run.output.delivery, big.data.run.output.value === undefined],
        secret: [secretive.warnings, secretive.data.run.output.value],
      };`,
      { children: [childAnswers(""), childAnswers("a", seen), childAnswers("b", seen), childAnswers("z".repeat(17_000)), childAnswers(`token ${secret}`)] },
    );
    const value = outcome.value as { empty: unknown[]; big: unknown[]; secret: [string[], string] };
    expect(value.empty).toEqual([false, "failed"]);
    expect(value.big).toEqual([true, "reference", true]);
    expect(value.secret[0]).toContain("output_redacted");
    expect(value.secret[1]).not.toContain(secret);
    expect(seen[0]!.all).not.toContain("PINEAPPLE");
    expect(seen[1]!.user).toContain("PINEAPPLE");
  });

  test("describeTool renders both selector branches", async () => {
    const outcome = await pi.runCodemode(`return await describeTool("external_delegate");`);
    const declaration = outcome.value as string;
    expect(declaration).toMatch(/role: string;/);
    expect(declaration).toMatch(/subagent_type: string;/);
    expect(declaration).toMatch(/ok: true;/);
  });
});

describe("in a session that is not persisted", () => {
  test("receipts never point to external_runs, which cannot serve such a session", async () => {
    await pi.dispose();
    pi = await startPiSession({ persisted: false });
    const background = await delegate({ ...worker, background: true }, { children: [childAnswers("done")] });
    expect(background.receipt.ok).toBe(true);
    expect(background.result.text).toContain("A completion message follows");
    expect(background.result.text).not.toContain("external_runs {");
    const big = await delegate(worker, { children: [childAnswers("y".repeat(17_000))] });
    expect(big.receipt.data.run!.output.delivery).toBe("reference");
    expect(big.result.text).toContain("not persisted");
    expect(big.result.text).not.toContain("external_runs {");
  });

  test("receipts carry no refs there, since no external_runs call can resolve them, and the declared output schema allows that", async () => {
    await pi.dispose();
    pi = await startPiSession({ persisted: false });
    for (const args of [worker, { ...worker, background: true }]) {
      const { receipt } = await delegate(args, { children: [childAnswers("y".repeat(17_000))] });
      expect(receipt.data.run).not.toHaveProperty("refs");
    }
    const workflow = await callForReceipt(pi, "external_workflow", { script: "return 1;" });
    expect(workflow.receipt.data.run).not.toHaveProperty("refs");
    // Discovery serves the schema Pi registered: it describes the absence.
    const help = await pi.callTool("external_help", { topic: "contracts", tool: "external_delegate" });
    expect(JSON.stringify(help.structuredContent)).toMatch(/not saved to a file/);
  });

  test("a completion message never points to external_runs inspect either: a background answer over 16 KiB says it cannot be paged here", async () => {
    await pi.dispose();
    pi = await startPiSession({ persisted: false });
    const completions = () => pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed");
    const background = await delegate({ ...worker, background: true }, { children: [childAnswers("z".repeat(17_000))] });
    const runId = background.receipt.data.run!.runId;
    await expect.poll(() => completions().length).toBe(1);
    const message = completions()[0] as unknown as { content: string; details: RunView };
    expect(message.details).toMatchObject({ runId, output: { delivery: "reference" } });
    expect(message.content).not.toContain("external_runs inspect");
    expect(message.content).toContain(`This session is not persisted, so external_runs cannot supervise it: a person reads it with /flow report ${runId}`);
  });
});
