import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import { afterAll, expect, test } from "vitest";
import { createPiHarness } from "../../src/harnesses/pi.ts";
import type { ChildDiagnostic } from "../../src/harnesses/types.ts";

/**
 * What a pi child's tool calls report as diagnostics (the run's diagnostics log, its trace's tool
 * spans, a fleet worker's answer to its coordinator): each call's id, and its arguments bounded and
 * redacted as the claude and codex harnesses bound theirs, however large the model's arguments.
 */
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-pi-diagnostics-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const SECRET = "sk-ant-api03-" + "Qw8Er4Ty6Ui2Op0As3Df5Gh7Jk9Lz1Xc".repeat(2);

test("a pi child's write of 200 KB reports its call with its id and at most a few KiB of redacted arguments, and the file is whole", async () => {
  const content = `key=${SECRET}\n${"x".repeat(200_000)}\n`;
  const step: FauxResponseStep = (context) =>
    context.messages.some((message) => message.role === "toolResult")
      ? fauxAssistantMessage([fauxText("done")])
      : fauxAssistantMessage([fauxToolCall("write", { path: "big.txt", content }, { id: "call_big" })], { stopReason: "toolUse" });
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  faux.setResponses([step, step]);
  const runtime = await ModelRuntime.create({ authPath: join(scratch, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");
  const harness = createPiHarness({ agentDir: join(scratch, "agent"), model: faux.getModel(), modelRuntime: runtime });
  const diagnostics: ChildDiagnostic[] = [];
  const result = await harness.run({
    profile: { name: "worker", description: "w", systemPrompt: "You work.", tools: ["write"], defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:worker", description: "big file" },
    prompt: "Write.",
    cwd: scratch,
    loading: { projectTrusted: true, isolated: false },
    signal: new AbortController().signal,
    onProgress: () => {},
    onOutput: () => {},
    onDiagnostic: (entry) => diagnostics.push(entry),
  });
  expect(result, JSON.stringify(result).slice(0, 600)).toMatchObject({ outcome: "succeeded", value: "done" });
  expect(readFileSync(join(scratch, "big.txt"), "utf8")).toBe(content);
  const call = diagnostics.find((entry) => entry.type === "tool_call");
  expect(call).toMatchObject({ type: "tool_call", tool: "write", id: "call_big", args: expect.stringContaining("big.txt") });
  if (call?.type !== "tool_call") throw new Error("no tool_call diagnostic");
  expect(call.args.length).toBeLessThan(2100);
  expect(call.args).not.toContain(SECRET);
  expect(diagnostics).toContainEqual({ type: "tool_result", tool: "write", isError: false, id: "call_big" });
});

test("a pi child that writes and calls tools without end has its output and diagnostics logs cut at their bounds, one note each, and its answer whole", async () => {
  const turn: FauxResponseStep = () => fauxAssistantMessage([fauxText("x".repeat(60)), fauxToolCall("ls", { path: "." })], { stopReason: "toolUse" });
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  faux.setResponses([turn, turn, turn, turn, fauxAssistantMessage([fauxText("done")])]);
  const runtime = await ModelRuntime.create({ authPath: join(scratch, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");
  const limits = { maxOutputBytes: 100, maxDiagnosticsBytes: 300 };
  const harness = createPiHarness({ agentDir: join(scratch, "agent"), model: faux.getModel(), modelRuntime: runtime, logLimits: limits });
  const outputs: string[] = [];
  const diagnostics: ChildDiagnostic[] = [];
  const result = await harness.run({
    profile: { name: "worker", description: "w", systemPrompt: "You work.", tools: ["ls"], defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:worker", description: "endless" },
    prompt: "Work.",
    cwd: scratch,
    loading: { projectTrusted: true, isolated: false },
    signal: new AbortController().signal,
    onProgress: () => {},
    onOutput: (text) => outputs.push(text),
    onDiagnostic: (entry) => diagnostics.push(entry),
  });
  expect(result).toMatchObject({ outcome: "succeeded", value: "done", usage: { toolCalls: 4 } });
  expect(outputs).toEqual(["x".repeat(60)]);
  const notes = diagnostics.filter((entry) => entry.type === "error").map((entry) => (entry.type === "error" ? entry.message : ""));
  expect(notes).toEqual([
    "The output log stops here: the child wrote more than 100 bytes of text.",
    "The diagnostics log stops here: the child reported more than 300 bytes of tool calls, results and errors.",
  ]);
  const kept = diagnostics.filter((entry) => entry.type !== "error");
  expect(kept.length).toBeGreaterThan(0);
  expect(Buffer.byteLength(kept.map((entry) => JSON.stringify(entry)).join(""))).toBeLessThanOrEqual(300);
});
