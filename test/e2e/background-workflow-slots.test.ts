import { afterEach, expect, test } from "vitest";
import { childAnswers, childAnswersWhenReleased, type Seen } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";

/**
 * Background workflows the model starts take slots as background children do
 * (PI_FLOW_MAX_BACKGROUND): each is a sandbox with up to `concurrency` children of its own, so a
 * burst of them would otherwise multiply both without bound.
 */

let pi: PiTestSession | undefined;
afterEach(() => pi?.dispose());

const script = 'return (await agent({ role: "explorer", prompt: "Look.", context: { mode: "none" } })).value;';

async function outcomes(session: PiTestSession, runIds: string[]): Promise<unknown[]> {
  const waited = await session.callTool("external_runs", { action: "wait", runIds });
  const data = (waited.structuredContent as { data: { completed: { runId: string; state: { outcome: string }; output: { value?: unknown } }[] } }).data;
  return runIds.map((runId) => {
    const run = data.completed.find((entry) => entry.runId === runId);
    return run && { outcome: run.state.outcome, value: run.output.value ?? null };
  });
}

test("a background workflow past PI_FLOW_MAX_BACKGROUND is queued, and its sandbox and children start once a slot frees", async () => {
  pi = await startPiSession({ env: { PI_FLOW_MAX_BACKGROUND: "1" } });
  const first = childAnswersWhenReleased("one");
  const seen: Seen[] = [];
  pi.queueChildren([first.step, childAnswers("two", seen)]);
  const a = await callForReceipt(pi, "external_workflow", { script, background: true });
  const b = await callForReceipt(pi, "external_workflow", { script, background: true });
  expect([a.run?.state.status, b.run?.state.status]).toEqual(["running", "queued"]);
  await first.started;
  // Before, the second workflow's child had started beside the first's.
  expect(seen).toHaveLength(0);
  first.release();
  expect(await outcomes(pi, [a.run!.runId, b.run!.runId])).toEqual([{ outcome: "succeeded", value: "one" }, { outcome: "succeeded", value: "two" }]);
  expect(seen).toHaveLength(1);
});

test("a queued background workflow that is cancelled ends cancelled, without running", async () => {
  pi = await startPiSession({ env: { PI_FLOW_MAX_BACKGROUND: "1" } });
  const first = childAnswersWhenReleased("one");
  pi.queueChildren([first.step]);
  const a = await callForReceipt(pi, "external_workflow", { script, background: true });
  const b = await callForReceipt(pi, "external_workflow", { script: 'text("ran"); return 1;', background: true });
  expect(b.run?.state.status).toBe("queued");
  // Cancelled and waited for in one script: the wait claims the result before a completion message could.
  const stopped = await pi.runCodemode(`
    await tools.external_runs({ action: "cancel", runIds: [${JSON.stringify(b.run!.runId)}] });
    const waited = await tools.external_runs({ action: "wait", runIds: [${JSON.stringify(b.run!.runId)}] });
    return waited.data.completed.map((run) => run.state.outcome);
  `);
  expect(stopped.value).toEqual(["cancelled"]);
  first.release();
  expect(await outcomes(pi, [a.run!.runId])).toEqual([{ outcome: "succeeded", value: "one" }]);
});
