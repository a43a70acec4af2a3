import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxThinking, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createPiHarness } from "../../src/harnesses/pi.ts";
import type { ChildResult } from "../../src/harnesses/types.ts";

/**
 * Every way a pi child's model can stop without an answer fails the run (the contract's `failed`)
 * with a message that says what happened and what to do: never "no answer", and never a cut-off
 * answer delivered as if it were whole.
 */
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-pi-endings-")));
const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }, { id: "faux-short", maxTokens: 10 }] });
let runtime: ModelRuntime;
beforeAll(async () => {
  runtime = await ModelRuntime.create({ authPath: join(scratch, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function childEnding(steps: FauxResponseStep[], modelId = "faux-1", cwd = scratch, tools = ["read"]): Promise<ChildResult> {
  faux.setResponses(steps);
  const harness = createPiHarness({ agentDir: join(scratch, "agent"), model: faux.getModel(modelId)!, modelRuntime: runtime });
  return harness.run({
    profile: { name: "worker", description: "w", systemPrompt: "You work.", tools, defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:worker", description: "ending" },
    prompt: "Answer.",
    cwd,
    loading: { projectTrusted: true, isolated: false },
    signal: new AbortController().signal,
    onProgress: () => {},
    onOutput: () => {},
    onDiagnostic: () => {},
  });
}

const failedWith = (result: ChildResult) => {
  expect(result.outcome, JSON.stringify(result)).toBe("failed");
  expect(result.error?.code).toBe("failed");
  return result.error!.message;
};

test("an answer cut off at the model's output limit fails naming the limit and what to do, its partial text never the answer", async () => {
  const message = failedWith(await childEnding([fauxAssistantMessage([fauxText("x".repeat(200))], { stopReason: "length" })], "faux-short"));
  expect(message).toContain("cut off at its model's output limit of 10 tokens (faux/faux-short)");
  expect(message).toContain("Raise the model's output limit");
  expect(message).toContain("ask for a shorter answer");
});

test("an answer the provider cut off below the model's limit, which Pi could not recover, fails saying so", async () => {
  // Pi takes such a reply out of the child's context to compact and retry; with nothing to compact it stops there.
  const message = failedWith(await childEnding([fauxAssistantMessage([fauxText("partial")], { stopReason: "length" })]));
  expect(message).toMatch(/^The child's answer was cut off after \d+ output tokens, below its model's limit of 16384 \(faux\/faux-1\)/);
  expect(message).toContain("Give the child less context or ask for a shorter answer");
});

test("a reply cut off before any text (the context window full) fails as cut off, not as no answer", async () => {
  const message = failedWith(await childEnding([fauxAssistantMessage([], { stopReason: "length" })], "faux-short"));
  expect(message).toContain("cut off after 0 output tokens, below its model's limit of 10 (faux/faux-short)");
  expect(message).toContain("lack of room in the context window");
});

test("a model request aborted by something other than the run, a reply of only thinking, and an empty reply each fail saying which", async () => {
  const aborted = failedWith(await childEnding([fauxAssistantMessage([], { stopReason: "aborted", errorMessage: "Request was aborted" })]));
  expect(aborted).toBe("The child's model request was aborted before it answered, not by a cancel or time limit of this run (by its provider or an extension): Request was aborted");
  expect(failedWith(await childEnding([fauxAssistantMessage([fauxThinking("let me think")])]))).toContain("only thinking, no text");
  expect(failedWith(await childEnding([fauxAssistantMessage([])]))).toBe("The child's model ended its reply with no text: there is no answer.");
});

test("a last reply that only called tools, after which a tool ended the child's loop, fails naming the tools", async () => {
  // A tool of an extension's may end the loop (terminate): the child's last reply is then its tool call.
  const project = join(scratch, "ending-tool");
  mkdirSync(join(project, ".pi", "extensions"), { recursive: true });
  writeFileSync(
    join(project, ".pi", "extensions", "finish.ts"),
    [
      "export default function (pi) {",
      "  pi.registerTool({",
      '    name: "finish", label: "finish", description: "Ends the turn.", parameters: { type: "object", properties: {} },',
      '    async execute() { return { content: [{ type: "text", text: "finished" }], details: undefined, terminate: true }; },',
      "  });",
      "}",
    ].join("\n"),
  );
  const step = fauxAssistantMessage([fauxToolCall("finish", {}, { id: "call_finish" })], { stopReason: "toolUse" });
  const message = failedWith(await childEnding([step], "faux-1", project, ["read", "finish"]));
  expect(message).toBe("The child's last model reply only called tools (finish) and its loop ended there (a tool ended it): no answer followed.");
});
