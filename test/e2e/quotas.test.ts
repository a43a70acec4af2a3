import { existsSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { childAnswers, type Seen } from "../support/children.ts";
import { startPiSession, type PiTestSession, type TurnScript } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";

/** Per-child quotas on the pi harness, in a real Pi session: the child's own loop is stopped, failing closed. */

let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
});
afterEach(() => pi.dispose());

const worker = { role: "worker", description: "Write notes", prompt: "Write the notes.", context: { mode: "none" } };
const delegate = (args: Record<string, unknown>, script: TurnScript = {}) => callForReceipt(pi, "external_delegate", args, script);

/** A child's model asks to write one file. */
const writes = (path: string): FauxResponseStep => () =>
  fauxAssistantMessage([fauxToolCall("write", { path, content: `${path}\n` })], { stopReason: "toolUse" });

describe("quotas on the pi harness", () => {
  test("maxToolCalls: the call past the quota never runs, the child stops, and the run fails naming the quota", async () => {
    const seen: Seen[] = [];
    const { receipt } = await delegate({ ...worker, maxToolCalls: 1 }, { children: [writes("first.txt"), writes("second.txt"), childAnswers("done", seen)] });
    expect(receipt).toMatchObject({
      ok: false,
      error: { code: "failed", message: expect.stringContaining("maxToolCalls (1)") },
      data: { run: { state: { status: "done", outcome: "failed" }, usage: { toolCalls: 2 } } },
    });
    expect(existsSync(join(pi.cwd, "first.txt"))).toBe(true);
    expect(existsSync(join(pi.cwd, "second.txt"))).toBe(false);
    // Stopped: the child never got to ask its model again.
    expect(seen).toHaveLength(0);
  });

  test("maxTurns: the turn past the quota is stopped before its model request, and the run fails naming the quota", async () => {
    const seen: Seen[] = [];
    const { receipt } = await delegate({ ...worker, maxTurns: 1 }, { children: [writes("first.txt"), childAnswers("too far", seen)] });
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed", message: expect.stringContaining("maxTurns (1)") } });
    expect(existsSync(join(pi.cwd, "first.txt"))).toBe(true);
    expect(receipt.data.run!.output).toMatchObject({ delivery: "none" });
    expect(seen).toHaveLength(0);
  });

  test("a child within its quotas succeeds", async () => {
    const { receipt } = await delegate(
      { ...worker, maxTurns: 2, maxToolCalls: 1 },
      { children: [writes("first.txt"), () => fauxAssistantMessage([fauxText("notes written")])] },
    );
    expect(receipt).toMatchObject({ ok: true, data: { run: { state: { outcome: "succeeded" }, output: { value: "notes written" } } } });
  });

  test("a quota below 1 fails Pi's validation before anything launches", async () => {
    const result = await pi.callTool("external_delegate", { ...worker, maxTurns: 0 });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/maxTurns/);
  });

  test("agent() takes the same quotas; a breach is a failed child the script can catch", async () => {
    const script = [
      "try {",
      '  await agent({ role: "worker", prompt: "Write the notes.", context: { mode: "none" }, maxToolCalls: 1 });',
      "} catch (error) { return { code: error.code, message: error.message }; }",
    ].join("\n");
    const { receipt } = await callForReceipt(pi, "external_workflow", { script }, { children: [writes("first.txt"), writes("second.txt")] });
    expect(receipt).toMatchObject({ ok: true, data: { run: { output: { value: { code: "failed", message: expect.stringContaining("maxToolCalls (1)") } } } } });
    expect(existsSync(join(pi.cwd, "second.txt"))).toBe(false);
  });

  test("agent() refuses a quota that is not a positive integer", async () => {
    const script = 'try { await agent({ role: "worker", prompt: "p", maxTurns: 1.5 }); } catch (e) { return e.message; }';
    const { receipt } = await callForReceipt(pi, "external_workflow", { script });
    expect(receipt.data.run!.output.value).toMatch(/^agent\(\) call 1 \("agent 1: p"\) option maxTurns: expected integer, got number/);
  });
});
