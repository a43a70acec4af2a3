import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { afterEach, expect, test } from "vitest";
import { childAnswers } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

/**
 * The run's diagnostics log, as a user reads it (`external_runs` inspect, view diagnostics): a
 * tool call's line and its result's name the call's id, so two overlapping calls of one tool are
 * told apart there as their spans are.
 */
let pi: PiTestSession;
afterEach(() => pi?.dispose());

test("two overlapping calls of one tool each show their call id on their call's line and on their result's", async () => {
  pi = await startPiSession();
  const twoListings = () =>
    fauxAssistantMessage([fauxToolCall("ls", { path: "." }, { id: "call_first" }), fauxToolCall("ls", { path: ".." }, { id: "call_second" })], { stopReason: "toolUse" });
  const worker = { role: "worker", description: "List twice", prompt: "List.", context: { mode: "none" } };
  const delegated = await pi.callTool("external_delegate", worker, { children: [twoListings, childAnswers("listed")] });
  const runId = (delegated.structuredContent as { data: { run: { runId: string } } }).data.run.runId;
  const inspected = await pi.callTool("external_runs", { action: "inspect", runIds: [runId], view: "diagnostics" });
  const text = (inspected.structuredContent as { data: { page: { text: string } } }).data.page.text;
  expect(text).toContain('tool ls [call_first] {"path":"."}');
  expect(text).toContain('tool ls [call_second] {"path":".."}');
  expect(text).toContain("tool ls [call_first] done");
  expect(text).toContain("tool ls [call_second] done");
});
