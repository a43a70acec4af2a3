import { afterAll, expect, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { pathWithFakes } from "../support/fake-cli.ts";
import { jsonSpans, startOtlpReceiver } from "../support/otlp-receiver.ts";

// Tracing is configured by the environment the process starts with: set it before pi-flow loads.
const receiver = await startOtlpReceiver();
Object.assign(process.env, { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
// The fake `claude` (test/fixtures/fake-cli) stands in for Claude Code.
process.env.PATH = pathWithFakes();
const { startPiSession } = await import("../support/pi-session.ts");
const { childAnswers } = await import("../support/children.ts");
const { flushTelemetry, telemetryReady } = await import("../../src/telemetry/index.ts");

// Pi's settings opt in to prompts and answers on spans, as docs/observability.md says.
const pi = await startPiSession({ settings: { flow: { telemetry: { content: true } } } });
afterAll(async () => {
  await pi.dispose();
  await receiver.close();
});

const runOf = (outcome: { structuredContent: unknown }): RunView => (outcome.structuredContent as { data: { run: RunView } }).data.run;

test("a model name the calling model made up, shaped like a key, is exported redacted, on the agent span and its turns: a CLI harness takes any name its CLI could", async () => {
  await telemetryReady();
  const keyModel = "sk-ant-api03-" + "Hq4Wm8Zt2Xc6Vb0Np3Ls7Kd1".repeat(3);
  const outcome = await pi.callTool("external_delegate", { role: "explorer", harness: "claude", model: keyModel, description: "Ask the CLI", prompt: "Say hi.", context: { mode: "none" } });
  const run = runOf(outcome);
  expect(run.task.harness).toBe("claude");
  await flushTelemetry();
  const spans = jsonSpans(receiver.requests).filter((span) => span.attributes["pi_flow.run_id"] === run.runId || span.attributes["gen_ai.operation.name"] === "chat");
  const agent = spans.find((span) => span.attributes["pi_flow.run_id"] === run.runId)!;
  expect(agent.attributes["gen_ai.request.model"]).toMatch(/REDACTED/);
  const turns = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "chat" && span.parentSpanId === agent.spanId);
  expect(turns.length).toBeGreaterThan(0);
  for (const turn of turns) expect(turn.name).toMatch(/^chat \S*REDACTED/);
  expect(receiver.requests.map((request) => request.body.toString("utf8")).join("\n")).not.toContain(keyModel);
});

test("in a Pi session each delegation is a trace of its own, a resumed child keeps its first run's correlation ID, flow.telemetry.content puts its prompt and answer on its span, and shutting down flushes the spans", async () => {
  await telemetryReady();
  const first = runOf(await pi.callTool("external_delegate", { role: "explorer", description: "Count", prompt: "Count the files.", context: { mode: "none" } }, { children: [childAnswers("Twelve.")] }));
  const again = runOf(await pi.callTool("external_delegate", { role: "explorer", description: "Count again", prompt: "And now?", resume: first.runId, context: { mode: "none" } }, { children: [childAnswers("Still twelve.")] }));
  expect(again.state.outcome).toBe("succeeded");
  await pi.shutdown(); // session_shutdown sends what the batch still holds

  const spans = jsonSpans(receiver.requests).filter((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent");
  const [one, two] = [first, again].map((run) => spans.find((span) => span.attributes["pi_flow.run_id"] === run.runId)!);
  expect(one!.traceId).not.toBe(two!.traceId);
  for (const span of [one!, two!]) expect(span.parentSpanId ?? "").toBe("");
  expect(one!.attributes).toMatchObject({ "pi_flow.correlation_id": first.runId, "pi_flow.outcome": "succeeded", "gen_ai.request.model": "faux/faux-1" });
  expect(two!.attributes["pi_flow.correlation_id"]).toBe(first.runId);
  expect(one!.attributes).toMatchObject({ "pi_flow.prompt": expect.stringContaining("Count the files."), "pi_flow.answer": "Twelve." });
});
