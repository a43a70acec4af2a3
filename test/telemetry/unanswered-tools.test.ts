import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { pathWithFakes } from "../support/fake-cli.ts";
import { jsonSpans, startOtlpReceiver } from "../support/otlp-receiver.ts";
import { sandbox } from "../runs/helpers.ts";

// A CLI child's tool calls whose results its stream never shows (server tools the API runs, a call
// cut off): their execute_tool spans end, ERROR with why, at the child's final event or when the
// run ends, instead of staying open, timing nothing, until the child's process is gone.
const receiver = await startOtlpReceiver();
// Tracing is configured by the environment the process starts with: set it before pi-flow loads.
vi.stubEnv("OTEL_TRACES_EXPORTER", "otlp");
vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint);
vi.stubEnv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
const { flushTelemetry, telemetryReady, traceRun, traced } = await import("../../src/telemetry/index.ts");
const { MAX_WAITING_TOOL_SPANS } = await import("../../src/telemetry/run-trace.ts");
const { createCliHarnessByName } = await import("../../src/harnesses/cli/index.ts");
const { BUILTIN_ROLES } = await import("../../src/harnesses/roles.ts");

const box = sandbox();
const cwd = mkdtempSync(join(tmpdir(), "pi-flow-unanswered-"));
afterAll(async () => {
  box.cleanup();
  rmSync(cwd, { recursive: true, force: true });
  await receiver.close();
  vi.unstubAllEnvs();
});

/** A traced agent run, as launch-child.ts starts one. */
function tracedRun(description: string) {
  const runs = box.store(description.replace(/\W/g, "-"));
  const run = runs.create({ kind: "agent", task: { description, role: "worker", harness: "claude" }, background: false });
  return { runs, run, trace: traceRun(() => ({ ...traced(run.view()), kind: "agent" })) };
}

test("a claude child's server tool calls, never answered in its stream, end ERROR at its final event, before its run does", async () => {
  await telemetryReady();
  const { runs, run, trace } = tracedRun("Search via claude");
  const harness = createCliHarnessByName("claude", { env: { ...process.env, PATH: pathWithFakes() } });
  const result = await harness.run({
    profile: BUILTIN_ROLES.worker!,
    task: { agent: "role:worker", description: "Search via claude" },
    prompt: "Search the docs. [fake:server-tools]",
    cwd,
    loading: { projectTrusted: true, isolated: false },
    signal: new AbortController().signal,
    onProgress: (progress) => trace.progress(progress),
    onOutput: (text) => trace.output(text),
    onDiagnostic: (entry) => trace.diagnostic(entry),
  });
  expect(result.outcome).toBe("succeeded");
  // The run has not ended yet: only spans already ended reach the collector.
  await flushTelemetry();
  const tools = jsonSpans(receiver.requests).filter((span) => span.attributes["gen_ai.operation.name"] === "execute_tool");
  expect(tools.map((span) => span.name).sort()).toEqual(["execute_tool search", "execute_tool web_search"]);
  for (const span of tools) expect(span.status).toMatchObject({ code: 2, message: "no result came before the child's final event" });
  expect(jsonSpans(receiver.requests).find((span) => span.attributes["pi_flow.run_id"] === run.runId)).toBeUndefined();

  trace.end(run.settle({ outcome: "succeeded", value: "done" }).view);
  await flushTelemetry();
  await runs.idle();
  expect(jsonSpans(receiver.requests).filter((span) => span.attributes["pi_flow.run_id"] === run.runId)).toHaveLength(1);
});

test("a tool call still waiting when its run ends (cancelled, or its CLI never said) ends ERROR, saying so", async () => {
  await telemetryReady();
  const { runs, run, trace } = tracedRun("Cancelled mid-tool");
  trace.diagnostic({ type: "tool_call", tool: "Bash", args: "{}" });
  trace.end(run.settle({ outcome: "cancelled", error: { code: "cancelled", message: "stopped" } }).view);
  await flushTelemetry();
  await runs.idle();
  const span = jsonSpans(receiver.requests).find((candidate) => candidate.name === "execute_tool Bash")!;
  expect(span.status).toMatchObject({ code: 2, message: "no result came before the run ended" });
});

test.each(["claude", "codex"])("%s: two calls of one tool at once keep their own results: the one answered failed, the one never answered ends ERROR unanswered", async (name) => {
  await telemetryReady();
  const { runs, run, trace } = tracedRun(`Overlapping via ${name}`);
  const harness = createCliHarnessByName(name, { env: { ...process.env, PATH: pathWithFakes() } });
  const result = await harness.run({
    profile: BUILTIN_ROLES.worker!,
    task: { agent: "role:worker", description: `Overlapping via ${name}` },
    prompt: "Run two commands. [fake:overlapping-calls]",
    cwd,
    loading: { projectTrusted: true, isolated: false },
    signal: new AbortController().signal,
    onProgress: (progress) => trace.progress(progress),
    onOutput: (text) => trace.output(text),
    onDiagnostic: (entry) => trace.diagnostic(entry),
  });
  expect(result.outcome).toBe("succeeded");
  trace.end(run.settle({ outcome: "succeeded", value: "done" }).view);
  await flushTelemetry();
  await runs.idle();
  const runSpan = jsonSpans(receiver.requests).find((span) => span.attributes["pi_flow.run_id"] === run.runId)!;
  const tools = jsonSpans(receiver.requests)
    .filter((span) => span.traceId === runSpan.traceId && span.attributes["gen_ai.operation.name"] === "execute_tool")
    .map((span) => [span.attributes["gen_ai.tool.call.id"], span.status?.message])
    .sort(([a], [b]) => String(a).localeCompare(String(b)));
  // Each span carries its call's id (sorted by it: the two start within one millisecond).
  const [fast, slow] = name === "claude" ? ["toolu_fast", "toolu_slow"] : ["item_fast", "item_slow"];
  expect(tools).toEqual([
    [fast, "the tool reported an error"],
    [slow, "no result came before the child's final event"],
  ]);
});

test("a child that calls tools without end and never answers them holds a bounded number of open spans: past it, the oldest ends ERROR, saying why", async () => {
  await telemetryReady();
  const { runs, run, trace } = tracedRun("Never answers");
  for (let n = 0; n < MAX_WAITING_TOOL_SPANS + 3; n++) trace.diagnostic({ type: "tool_call", tool: "Bash", args: "{}", id: `toolu_${n}` });
  // The run has not ended: only the spans let go of are exported, the three oldest.
  await flushTelemetry();
  const early = jsonSpans(receiver.requests).filter((span) => span.name === "execute_tool Bash" && /^toolu_\d+$/.test(String(span.attributes["gen_ai.tool.call.id"])));
  expect(early.map((span) => [span.attributes["gen_ai.tool.call.id"], span.status?.message])).toEqual(
    ["toolu_0", "toolu_1", "toolu_2"].map((id) => [id, `more than ${MAX_WAITING_TOOL_SPANS} tool calls were waiting for their results`]),
  );
  trace.end(run.settle({ outcome: "cancelled", error: { code: "cancelled", message: "stopped" } }).view);
  await flushTelemetry();
  await runs.idle();
});
