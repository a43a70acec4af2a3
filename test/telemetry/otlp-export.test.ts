import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { FAUX_EXTENSION, flow, flowSandbox, PROJECT_ROOT, startedRunId, type FlowResult } from "../cli/support.ts";
import { jsonSpans, refusingEndpoint, startOtlpReceiver, type JsonSpan, type OtlpReceiver } from "../support/otlp-receiver.ts";

// A real `flow run` of a workflow whose children run on Pi's faux model, exporting its spans to a
// receiver on loopback, as an operator's collector would take them.
const sandbox = flowSandbox();
const SECRET = "sk-ant-api03-" + "Qw8Er4Ty6Ui2Op0As3Df5Gh7Jk9Lz1Xc".repeat(2);
sandbox.fauxRules(
  [
    { match: "List the files", tool: { name: "ls", arguments: { path: "." } }, then: "Three files." },
    { match: "Break on purpose", error: `the provider refused key ${SECRET}` },
    { match: "Check the delegation", answer: "Delegation checked." },
    { match: "Summarize", answer: "All good." },
  ],
  { cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
);
const script = sandbox.file(
  "traced.js",
  `export const apiVersion = 1;
export const meta = { name: "traced", description: "Three children, one with a tool call and one failing, and a delegation.", tools: ["external_delegate"] };
export default async function traced() {
  const listed = await agent({ role: "explorer", description: "List with key ${SECRET}", prompt: "List the files. The key is ${SECRET}.", context: { mode: "none" } });
  await agent({ role: "explorer", description: "Break", prompt: "Break on purpose.", context: { mode: "none" } }).catch(() => null);
  await tools.external_delegate({ role: "explorer", description: "Delegated check", prompt: "Check the delegation.", context: { mode: "none" } });
  const summary = await agent({ role: "explorer", description: "Summarize", prompt: "Summarize: " + listed.output, context: { mode: "none" } });
  return summary.output;
}
`,
);
const RUN = ["run", script, "--cwd", sandbox.root, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION];
const tracing = (endpoint: string, protocol: string, content = false) => ({
  ...sandbox.env,
  OTEL_TRACES_EXPORTER: "otlp",
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  // The JSON run opts in to prompts and answers on spans; the protobuf run shows they are off by default.
  ...(content ? { PI_FLOW_TELEMETRY_CONTENT: "1" } : {}),
});

/** The variables docs/observability.md tells an operator to export, as its sh block sets them. */
function documentedVariables(): Record<string, string> {
  const page = readFileSync(join(PROJECT_ROOT, "docs", "observability.md"), "utf8");
  const block = /### Turning tracing on[\s\S]*?```sh\n([\s\S]*?)```/.exec(page)?.[1] ?? "";
  const lines = block.split("\n").map((line) => line.replace(/\s+#.*$/, "").trim());
  return Object.fromEntries(lines.filter((line) => line !== "").map((line) => /^export (\w+)=(\S+)$/.exec(line)!.slice(1, 3) as [string, string]));
}
const documented = documentedVariables();

let json: OtlpReceiver;
let protobuf: OtlpReceiver;
let runs: { json: FlowResult; protobuf: FlowResult; refused: FlowResult };

beforeAll(async () => {
  [json, protobuf] = await Promise.all([startOtlpReceiver(), startOtlpReceiver()]);
  const refused = await refusingEndpoint();
  const [a, b, c] = await Promise.all([
    flow(RUN, { env: tracing(json.endpoint, "http/json", true) }),
    // The docs' own variables, the endpoint pointed at this test's collector instead of localhost:4318.
    flow(RUN, { env: { ...sandbox.env, ...documented, OTEL_EXPORTER_OTLP_ENDPOINT: protobuf.endpoint } }),
    // The exporter retries a refused connection until its timeout (10 s by default), which holds the
    // exit that long: 1 s is enough to see the refusal reported once.
    flow(RUN, { env: { ...tracing(refused, "http/json"), OTEL_EXPORTER_OTLP_TIMEOUT: "1000" } }),
  ]);
  runs = { json: a, protobuf: b, refused: c };
}, 180_000); // three flow processes at once on a busy 2-CPU machine
afterAll(async () => {
  await Promise.all([json?.close(), protobuf?.close()]);
  sandbox.dispose();
});

const ancestors = (span: JsonSpan, byId: Map<string, JsonSpan>): JsonSpan[] => {
  const chain: JsonSpan[] = [];
  for (let at = span.parentSpanId ? byId.get(span.parentSpanId) : undefined; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined) chain.push(at);
  return chain;
};

test("flow run exports one trace over OTLP/HTTP JSON: the workflow span above every child, turn and tool span, with run IDs and token usage, and no secret", () => {
  expect(runs.json.code).toBe(0);
  expect(runs.json.stdout.trim()).toBe('"All good."');
  expect(json.requests.every((request) => request.path === "/v1/traces" && request.contentType.includes("application/json"))).toBe(true);
  const spans = jsonSpans(json.requests);
  expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);

  const workflowRunId = startedRunId(runs.json.stderr);
  const root = spans.find((span) => span.attributes["pi_flow.run_id"] === workflowRunId)!;
  expect(root).toMatchObject({ name: "workflow inline", attributes: { "pi_flow.kind": "workflow", "pi_flow.outcome": "succeeded", "pi_flow.children": 3, "pi_flow.children_failed": 1 } });
  expect(root.parentSpanId ?? "").toBe("");
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  for (const span of spans.filter((candidate) => candidate !== root)) expect(ancestors(span, byId), span.name).toContain(root);

  // Three agent() children and the run of the script's tools.external_delegate call, all under the workflow.
  const agents = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent");
  expect(agents).toHaveLength(4);
  for (const agent of agents) {
    expect(agent.parentSpanId).toBe(root.spanId);
    expect(agent.attributes).toMatchObject({
      "pi_flow.kind": "agent",
      "pi_flow.harness": "pi",
      "pi_flow.role": "explorer",
      "pi_flow.parent_run_id": workflowRunId,
      "pi_flow.correlation_id": workflowRunId,
      "gen_ai.request.model": "faux/faux-1",
      "pi_flow.compactions": 0,
    });
    expect(agent.attributes["pi_flow.run_id"]).toMatch(/^ag_/);
    expect(agent.attributes["pi_flow.cost_usd"]).toBeGreaterThan(0);
  }
  const named = (description: string) => agents.find((agent) => String(agent.attributes["pi_flow.description"]).startsWith(description))!;
  for (const agent of [named("List with key"), named("Delegated check"), named("Summarize")]) {
    expect(agent.attributes["pi_flow.outcome"]).toBe("succeeded");
    expect(agent.status?.code ?? 0).not.toBe(2);
    expect(agent.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    expect(agent.attributes["pi_flow.time_to_first_token_ms"]).toBeGreaterThanOrEqual(0);
  }
  // The delegation is the workflow's child like an agent() call's; its tools.* call is a span of the workflow too.
  expect(spans.find((span) => span.name === "tools.external_delegate")).toMatchObject({ parentSpanId: root.spanId, attributes: { "pi_flow.call_index": 0 } });
  // A failed child's span says how it failed: its error code, ERROR status, the provider's error as an event, and what it cost.
  const broken = named("Break");
  expect(broken.attributes).toMatchObject({ "pi_flow.outcome": "failed", "pi_flow.error.code": "failed", "error.type": "failed" });
  expect(broken.status?.code).toBe(2);
  expect(broken.events.map((event) => event.name)).toContain("error");

  // The first child took two turns (the tool call, then its answer); its ls call is a span of the first.
  const lister = named("List with key");
  const turns = spans.filter((span) => span.parentSpanId === lister.spanId && span.attributes["gen_ai.operation.name"] === "chat");
  expect(turns.map((turn) => turn.attributes["pi_flow.turn"])).toEqual([1, 2]);
  const tool = spans.find((span) => span.attributes["gen_ai.tool.name"] === "ls")!;
  expect(tool).toMatchObject({ name: "execute_tool ls" });
  expect(tool.parentSpanId).toBe(turns[0]!.spanId);
  expect(lister.attributes["pi_flow.turns"]).toBe(2);

  // Content is on for this run: the prompt, the tool's arguments and the answer are exported, the secret in them redacted.
  expect(lister.attributes["pi_flow.prompt"]).toMatch(/^List the files\. The key is \S*REDACTED/);
  expect(lister.attributes["pi_flow.answer"]).toBe("Three files.");
  expect(JSON.parse(String(tool.attributes["pi_flow.tool.arguments"]))).toEqual({ path: "." });
  expect(named("Delegated check").attributes["pi_flow.answer"]).toBe("Delegation checked.");
  const exported = json.requests.map((request) => request.body.toString("utf8")).join("\n");
  expect(exported).not.toContain(SECRET);
  expect(lister.attributes["pi_flow.description"]).toMatch(/^List with key \S*REDACTED/);
});

test("the variables docs/observability.md exports send the same spans as protobuf to <endpoint>/v1/traces", () => {
  expect(documented).toEqual({
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://localhost:4318",
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    OTEL_SERVICE_NAME: "pi-flow",
  });
  expect(runs.protobuf.code).toBe(0);
  expect(protobuf.requests.length).toBeGreaterThan(0);
  expect(protobuf.requests.every((request) => request.path === "/v1/traces" && request.contentType === "application/x-protobuf")).toBe(true);
  const body = Buffer.concat(protobuf.requests.map((request) => request.body)).toString("latin1");
  // Protobuf keeps strings as UTF-8 bytes: the run IDs and attribute names are there, the secret is not.
  expect(body).toContain(startedRunId(runs.protobuf.stderr));
  expect(body).toContain("gen_ai.usage.output_tokens");
  expect(body).toContain("service.name");
  expect(body).not.toContain(SECRET);
  // Content is off by default: no prompt and no answer is exported.
  expect(body).not.toContain("pi_flow.prompt");
  expect(body).not.toContain("The key is");
  expect(body).not.toContain("Three files.");
});

test("a collector that refuses connections costs one warning on stderr; the run completes as it would without tracing", () => {
  expect(runs.refused.code).toBe(0);
  expect(runs.refused.stdout.trim()).toBe('"All good."');
  expect(runs.refused.stderr).toMatch(/run wf_\S+ succeeded/);
  const warnings = runs.refused.stderr.split("\n").filter((line) => line.startsWith("flow: telemetry:"));
  expect(warnings, runs.refused.stderr).toHaveLength(1);
  expect(warnings[0]).toMatch(/^flow: telemetry: spans could not be exported \(http\/json\): .*; the run is not affected\.$/);
});
