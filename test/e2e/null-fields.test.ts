import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { childAnswers } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";

// Models often fill every optional field, sending null for the ones they do not use.
let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
});
afterEach(() => pi.dispose());

const unusedDelegateFields = { harness: null, context: null, background: null, model: null, outputSchema: null, timeoutMs: null, cwd: null };

describe("an optional field sent as null is absent", () => {
  test("external_delegate by role with subagent_type: null runs the child, as if the field were left out", async () => {
    const call = { role: "worker", subagent_type: null, description: "Check build", prompt: "Report.", ...unusedDelegateFields };
    const { receipt } = await callForReceipt(pi, "external_delegate", call, { children: [childAnswers("Done.")] });
    expect(receipt).toMatchObject({ ok: true, data: { run: { output: { value: "Done." } } } });
  });

  test("external_delegate by subagent_type with role: null and harness: null is not refused by the not rule", async () => {
    const call = { role: null, subagent_type: "no-such-agent", harness: null, description: "Help", prompt: "Help." };
    const { receipt } = await callForReceipt(pi, "external_delegate", call);
    // Validation passed: the agent definition is looked up, and a missing one is a typed refusal.
    expect(receipt).toMatchObject({ ok: false, error: { code: "selection_invalid" } });
  });

  test("external_runs, external_help and external_workflow take null for an unused field", async () => {
    const list = await pi.callTool("external_runs", { action: "list", runIds: null, view: null, cursor: null, limit: null, message: null });
    expect(list.structuredContent).toMatchObject({ ok: true, action: "list" });
    const help = await pi.callTool("external_help", { topic: "errors", tool: null, harness: null });
    expect(help.structuredContent).toMatchObject({ ok: true, data: { topic: "errors" } });
    const { receipt } = await callForReceipt(pi, "external_workflow", { script: "return 7;", workflow: null, args: null, resume: null });
    expect(receipt).toMatchObject({ ok: true, data: { run: { output: { value: 7 } } } });
  });

  test("inside codemode too", async () => {
    pi.queueChildren([childAnswers("Scripted.")]);
    const outcome = await pi.runCodemode(`
      const result = await tools.external_delegate({ role: "worker", subagent_type: null, harness: null, description: "d", prompt: "p" });
      return result.ok;`);
    expect(outcome.value).toBe(true);
  });

  test("a required field sent as null is still refused by Pi's validation, naming the field", async () => {
    const result = await pi.callTool("external_delegate", { role: "worker", description: "d", prompt: null });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/Validation failed for tool "external_delegate"/);
    expect(result.text).toMatch(/prompt/);
  });
});
