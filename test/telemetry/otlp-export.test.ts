import { afterAll, beforeAll, expect, test } from "vitest";
import { FAUX_EXTENSION, flow, flowSandbox, startedRunId, type FlowResult } from "../cli/support.ts";
import { jsonSpans, refusingEndpoint, startOtlpReceiver, type JsonSpan, type OtlpReceiver } from "../support/otlp-receiver.ts";

// A real `flow run` of a workflow whose children run on Pi's faux model, exporting its spans to a
// receiver on loopback, as an operator's collector would take them.
const sandbox = flowSandbox();
const SECRET = "sk-ant-api03-" + "Qw8Er4Ty6Ui2Op0As3Df5Gh7Jk9Lz1Xc".repeat(2);
sandbox.fauxRules([
  { match: "List the files", tool: { name: "ls", arguments: { path: "." } }, then: "Three files." },
  { match: "Summarize", answer: "All good." },
]);
const script = sandbox.file(
  "traced.js",
  `export const apiVersion = 1;
export const meta = { name: "traced", description: "Two children, one with a tool call." };
export default async function traced() {
  const listed = await agent({ role: "explorer", description: "List with key ${SECRET}", prompt: "List the files. The key is ${SECRET}.", context: { mode: "none" } });
  const summary = await agent({ role: "explorer", description: "Summarize", prompt: "Summarize: " + listed.output, context: { mode: "none" } });
  return summary.output;
}
`,
);
const RUN = ["run", script, "--cwd", sandbox.root, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION];
const tracing = (endpoint: string, protocol: string) => ({ ...sandbox.env, OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: protocol });

let json: OtlpReceiver;
let protobuf: OtlpReceiver;
let runs: { json: FlowResult; protobuf: FlowResult; refused: FlowResult };

beforeAll(async () => {
  [json, protobuf] = await Promise.all([startOtlpReceiver(), startOtlpReceiver()]);
  const refused = await refusingEndpoint();
  const [a, b, c] = await Promise.all([
    flow(RUN, { env: tracing(json.endpoint, "http/json") }),
    flow(RUN, { env: tracing(protobuf.endpoint, "http/protobuf") }),
    flow(RUN, { env: tracing(refused, "http/json") }),
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
  expect(root).toMatchObject({ name: "workflow inline", attributes: { "pi_flow.kind": "workflow", "pi_flow.outcome": "succeeded", "pi_flow.children": 2 } });
  expect(root.parentSpanId ?? "").toBe("");
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  for (const span of spans.filter((candidate) => candidate !== root)) expect(ancestors(span, byId), span.name).toContain(root);

  const agents = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent");
  expect(agents).toHaveLength(2);
  for (const agent of agents) {
    expect(agent.parentSpanId).toBe(root.spanId);
    expect(agent.attributes).toMatchObject({
      "pi_flow.kind": "agent",
      "pi_flow.harness": "pi",
      "pi_flow.role": "explorer",
      "pi_flow.parent_run_id": workflowRunId,
      "pi_flow.correlation_id": workflowRunId,
      "pi_flow.outcome": "succeeded",
      "gen_ai.request.model": "faux/faux-1",
    });
    expect(agent.attributes["pi_flow.run_id"]).toMatch(/^ag_/);
    expect(agent.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    expect(agent.attributes["pi_flow.time_to_first_token_ms"]).toBeGreaterThanOrEqual(0);
    expect(agent.attributes["pi_flow.compactions"]).toBe(0);
  }
  // The first child took two turns (the tool call, then its answer); its ls call is a span of the first.
  const lister = agents.find((agent) => String(agent.attributes["pi_flow.description"]).startsWith("List with key"))!;
  const turns = spans.filter((span) => span.parentSpanId === lister.spanId && span.attributes["gen_ai.operation.name"] === "chat");
  expect(turns.map((turn) => turn.attributes["pi_flow.turn"])).toEqual([1, 2]);
  const tool = spans.find((span) => span.attributes["gen_ai.tool.name"] === "ls")!;
  expect(tool).toMatchObject({ name: "execute_tool ls" });
  expect(tool.parentSpanId).toBe(turns[0]!.spanId);
  expect(lister.attributes["pi_flow.turns"]).toBe(2);

  // The secret in the description is redacted; the prompt and answers are not exported at all.
  const exported = json.requests.map((request) => request.body.toString("utf8")).join("\n");
  expect(exported).not.toContain(SECRET);
  expect(lister.attributes["pi_flow.description"]).toMatch(/^List with key \S*REDACTED/);
  expect(exported).not.toContain("The key is");
  expect(exported).not.toContain("Three files.");
});

test("with http/protobuf the same spans go out as protobuf", () => {
  expect(runs.protobuf.code).toBe(0);
  expect(protobuf.requests.length).toBeGreaterThan(0);
  expect(protobuf.requests.every((request) => request.path === "/v1/traces" && request.contentType === "application/x-protobuf")).toBe(true);
  const body = Buffer.concat(protobuf.requests.map((request) => request.body)).toString("latin1");
  // Protobuf keeps strings as UTF-8 bytes: the run IDs and attribute names are there, the secret is not.
  expect(body).toContain(startedRunId(runs.protobuf.stderr));
  expect(body).toContain("gen_ai.usage.output_tokens");
  expect(body).not.toContain(SECRET);
});

test("a collector that refuses connections costs one warning on stderr; the run completes as it would without tracing", () => {
  expect(runs.refused.code).toBe(0);
  expect(runs.refused.stdout.trim()).toBe('"All good."');
  expect(runs.refused.stderr).toMatch(/run wf_\S+ succeeded/);
  const warnings = runs.refused.stderr.split("\n").filter((line) => line.startsWith("flow: telemetry:"));
  expect(warnings, runs.refused.stderr).toHaveLength(1);
  expect(warnings[0]).toMatch(/^flow: telemetry: spans could not be exported \(http\/json\): .*; the run is not affected\.$/);
});
