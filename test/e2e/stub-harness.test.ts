import { afterEach, expect, test } from "vitest";
import { checkStructuredValue } from "../../src/harnesses/structured-answer.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";

let pi: PiTestSession | undefined;
afterEach(() => pi?.dispose());

const verdict = {
  type: "object",
  properties: { verdict: { enum: ["approve", "request_changes"] }, blocking: { type: "array", items: { type: "string" }, minItems: 1 } },
  required: ["verdict", "blocking"],
  additionalProperties: false,
};

test('harness "stub" inside Pi answers a child with no model: a conforming value, marked stubbed on the receipt and in its evidence', async () => {
  pi = await startPiSession();
  // No child answer is scripted: a child that asked the faux model would have nothing to say.
  const call = { role: "reviewer", description: "Judge the parser", prompt: "Is src/parser.ts correct?", context: { mode: "none" }, outputSchema: verdict, harness: "stub" };
  const { receipt, run, result } = await callForReceipt(pi, "external_delegate", call);
  expect(receipt.ok).toBe(true);
  expect(result.text).toContain("Warning (stubbed): answered by the stub harness");
  expect(receipt.warnings).toContain("stubbed");
  expect(run).toMatchObject({ task: { harness: "stub" }, usage: { inputTokens: 0, outputTokens: 0 } });
  const value = run!.output.delivery === "inline" ? run!.output.value : undefined;
  expect(await checkStructuredValue(value, verdict)).toMatchObject({ ok: true });

  // A workflow whose agent() asks for the stub: the root's receipt warns too.
  const script = `const run = await agent({ role: "explorer", description: "Map", prompt: "Map it.", harness: "stub" }); return run.output;`;
  const workflow = await callForReceipt(pi, "external_workflow", { script, description: "stubbed map" });
  expect(workflow.receipt.ok).toBe(true);
  expect(workflow.receipt.warnings).toContain("stubbed");
  expect(workflow.run).toMatchObject({ output: { value: '[stub] role:explorer "Map" #1: no model was called.' } });
});

test("a stubbed child whose outputSchema asks for a value too large to generate ends cancelled when the user cancels it, and the next stubbed child is answered", async () => {
  pi = await startPiSession();
  const outputSchema = { type: "string", pattern: "^((a{1000}){1000}){100}$" };
  const call = { role: "reviewer", description: "Huge value", prompt: "Answer.", context: { mode: "none" }, outputSchema, harness: "stub", background: true };
  const { receipt, result } = await callForReceipt(pi, "external_delegate", call);
  // Accepted in the background, it is marked stubbed already, as a foreground one is when it settles.
  expect(receipt.warnings).toContain("stubbed");
  expect(result.text).toContain("Warning (stubbed): the stub harness will answer this child");
  const runId = receipt.data.run!.runId;
  await pi.callTool("external_runs", { action: "cancel", runIds: [runId] });
  const waited = await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
  expect(waited.structuredContent).toMatchObject({ ok: true, data: { completed: [{ runId, state: { outcome: "cancelled" } }] } });
  // The worker it ran in was replaced: the next stubbed child is answered.
  const next = await callForReceipt(pi, "external_delegate", { ...call, description: "Small value", outputSchema: { type: "string", pattern: "^a{3}$" }, background: false });
  expect(next.run).toMatchObject({ output: { value: "aaa" } });
});

test("with flow.stub on, a background workflow's accepted receipt warns stubbed: every agent() child it starts will be stubbed", async () => {
  pi = await startPiSession({ settings: { flow: { stub: true } } });
  const script = `const run = await agent({ role: "explorer", description: "Map", prompt: "Map it." }); return run.output;`;
  const { receipt, result } = await callForReceipt(pi, "external_workflow", { script, description: "stubbed map", background: true });
  expect(receipt).toMatchObject({ ok: true, warnings: ["stubbed"] });
  expect(result.text).toContain("Warning (stubbed): the stub harness will answer every agent() child of this workflow");
  const runId = receipt.data.run!.runId;
  const waited = await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
  expect(waited.structuredContent).toMatchObject({ ok: true, data: { completed: [{ state: { outcome: "succeeded" }, output: { value: '[stub] role:explorer "Map" #1: no model was called.' } }] } });
  // The wait hands over the canned answer: it says so, in its warnings and its text.
  expect(waited.structuredContent).toMatchObject({ warnings: ["stubbed"] });
  expect(waited.text).toContain(`Warning (stubbed): the stub harness answered ${runId}`);
});

test("a background run answered by the stub harness says so in its completion message, a workflow whose script alone asked for the stub included", async () => {
  pi = await startPiSession();
  const completions = () => pi!.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed") as unknown as { content: string }[];
  const call = { role: "reviewer", description: "Judge", prompt: "Judge it.", context: { mode: "none" }, outputSchema: verdict, harness: "stub", background: true };
  const child = await callForReceipt(pi, "external_delegate", call);
  await expect.poll(() => completions().length).toBe(1);
  expect(completions()[0]!.content).toContain(`Warning (stubbed): the stub harness answered ${child.receipt.data.run!.runId}`);

  const script = `const run = await agent({ role: "explorer", description: "Map", prompt: "Map it.", harness: "stub" }); return run.output;`;
  const workflow = await callForReceipt(pi, "external_workflow", { script, description: "stubbed map", background: true });
  await expect.poll(() => completions().length).toBe(2);
  expect(completions()[1]!.content).toContain(`Warning (stubbed): the stub harness answered ${workflow.receipt.data.run!.runId}`);
});
