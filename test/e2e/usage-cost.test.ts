import type { AssistantMessage, ToolResultMessage } from "@earendil-works/pi-ai";
import { afterEach, beforeEach, expect, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { childAnswers } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

// Dollars per million tokens, as Pi's model catalog prices a model.
const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession({ modelCost: PRICE });
});
afterEach(() => pi.dispose());

const dollars = (usage: NonNullable<RunView["usage"]>) =>
  ((usage.inputTokens ?? 0) * PRICE.input + (usage.outputTokens ?? 0) * PRICE.output + (usage.cacheReadTokens ?? 0) * PRICE.cacheRead + (usage.cacheWriteTokens ?? 0) * PRICE.cacheWrite) / 1e6;

function toolResult(toolName: string): ToolResultMessage {
  const found = pi.session.messages.filter((m): m is ToolResultMessage => m.role === "toolResult" && m.toolName === toolName).at(-1);
  if (!found) throw new Error(`no ${toolName} result`);
  return found;
}

test("a child's cost is priced from Pi's model catalog, with its cache tokens, and lands in run.usage", async () => {
  const outcome = await pi.callTool("external_delegate", { role: "explorer", description: "d", prompt: "Count the files." }, { children: [childAnswers("Twelve files, all of them typed.")] });
  const run = (outcome.structuredContent as { data: { run: RunView } }).data.run;
  expect(run.usage).toMatchObject({ turns: 1, cacheReadTokens: expect.any(Number), cacheWriteTokens: expect.any(Number) });
  expect(run.usage!.outputTokens).toBeGreaterThan(0);
  expect(run.usage!.costUsd).toBeGreaterThan(0);
  expect(run.usage!.costUsd).toBeCloseTo(dollars(run.usage!), 12);
});

test("a workflow's tool result carries its children's summed usage and cost, and Pi's session stats include it", async () => {
  const script = `const a = await agent({ role: "explorer", description: "one", prompt: "First look.", context: { mode: "none" } });
const b = await agent({ role: "explorer", description: "two", prompt: "Second look.", context: { mode: "none" } });
return [a.usage, b.usage];`;
  const outcome = await pi.callTool("external_workflow", { script }, { children: [childAnswers("The first answer is long enough."), childAnswers("Second.")] });
  const envelope = outcome.structuredContent as { ok: boolean; data: { run: RunView & { output: { value: NonNullable<RunView["usage"]>[] } } } };
  expect(envelope.ok).toBe(true);
  const [first, second] = envelope.data.run.output.value;
  const run = envelope.data.run;
  for (const key of ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "turns"] as const) {
    expect(run.usage![key]).toBe((first![key] ?? 0) + (second![key] ?? 0));
  }
  expect(run.usage!.costUsd).toBeCloseTo(first!.costUsd! + second!.costUsd!, 12);
  expect(run.usage!.costUsd).toBeGreaterThan(0);

  const result = toolResult("external_workflow");
  expect(result.usage).toMatchObject({
    input: run.usage!.inputTokens,
    output: run.usage!.outputTokens,
    cacheRead: run.usage!.cacheReadTokens,
    cacheWrite: run.usage!.cacheWriteTokens,
  });
  expect(result.usage!.cost.total).toBeCloseTo(run.usage!.costUsd!, 12);

  // Pi's own totals: the parent's assistant messages plus every tool result's usage.
  const parentSpend = pi.session.messages.filter((m): m is AssistantMessage => m.role === "assistant").reduce((sum, m) => sum + m.usage.cost.total, 0);
  const stats = pi.session.getSessionStats();
  expect(stats.cost).toBeCloseTo(parentSpend + run.usage!.costUsd!, 12);
  expect(stats.tokens.cacheRead).toBeGreaterThanOrEqual(run.usage!.cacheReadTokens!);
});
