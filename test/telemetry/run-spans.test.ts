import { afterAll, expect, test, vi } from "vitest";
import { jsonSpans, startOtlpReceiver } from "../support/otlp-receiver.ts";
import { sandbox } from "../runs/helpers.ts";

// A run's spans as the collector receives them, in the cases a run does not go as planned.
const receiver = await startOtlpReceiver();
// Tracing is configured by the environment the process starts with: set it before pi-flow loads.
vi.stubEnv("OTEL_TRACES_EXPORTER", "otlp");
vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint);
vi.stubEnv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
const { flushTelemetry, telemetryReady, traceRun, traced } = await import("../../src/telemetry/index.ts");
const { startWorkflow } = await import("../../src/orchestrator/workflow/start.ts");
const { parseSelected } = await import("../../src/orchestrator/workflow/sources.ts");
const { RunTree } = await import("../../runtime/index.ts");
const { launchChild } = await import("../../src/orchestrator/child/index.ts");
type LaunchEnvironment = import("../../src/orchestrator/child/index.ts").LaunchEnvironment;
type PreparedChild = import("../../src/orchestrator/child/launch-types.ts").PreparedChild;

const box = sandbox();
afterAll(async () => {
  box.cleanup();
  await receiver.close();
  vi.unstubAllEnvs();
});

/** A store whose writer throws once a run's terminal line is written, as a failure inside settling would. */
const failingStore = (session: string) =>
  box.store(session, {
    hooks: {
      at: (point) => {
        if (point === "terminal-written") throw new Error("the disk went away");
      },
    },
  });

// A run whose settle throws (here the store's writer seam throws once the terminal line is written,
// as a failure inside settling would) must still end its span: a span never ended is never
// exported, and the operator's trace would lack the run altogether.
test("a workflow whose settle throws still exports its span, ended ERROR with why, and the tools.* span still open under it", async () => {
  await telemetryReady();
  const runs = failingStore("s");
  const selected = { name: "inline", source: "inline" as const, label: "inline.js", text: 'export const apiVersion = 1;\nexport default async function () { tools.hang({}).catch(() => null); return "done"; }\n' };
  // Only what a script without agent() calls reads of its environment: where it runs and its store.
  const env = { cwd: box.project, runs } as Partial<LaunchEnvironment> as LaunchEnvironment;
  const started = startWorkflow({
    workflow: parseSelected(selected),
    selected,
    args: {},
    description: "settles badly",
    env,
    // A tool that never answers: its tools.* span is open when the run settles.
    tools: () => ({ hang: () => new Promise<never>(() => undefined) }),
    background: false,
    depth: 0,
    tree: { budget: new RunTree(), nested: false },
  });
  // The run still settles, failed with why: it never stays live (test/orchestrator/settle-failure.test.ts).
  expect((await started.settled).view.state).toMatchObject({ outcome: "failed", error: { message: "the run could not settle: the disk went away" } });
  await flushTelemetry();

  const spans = jsonSpans(receiver.requests);
  const root = spans.find((span) => span.attributes["pi_flow.run_id"] === started.runId);
  expect(root, "the run's span was exported").toBeDefined();
  expect(root!.status?.code).toBe(2);
  expect(root!.attributes).toMatchObject({ "pi_flow.outcome": "failed", "pi_flow.error.code": "failed" });
  expect(root!.events.map((event) => event.name)).toContain("error");
  expect(receiver.requests.map((request) => request.body.toString("utf8")).join("\n")).toContain("the run could not settle: the disk went away");
  expect(spans.find((span) => span.name === "tools.hang")?.parentSpanId).toBe(root!.spanId);
});

test("a tools.* call's error code, which the tool chose, is redacted on its span as the journal redacts it", async () => {
  await telemetryReady();
  // A GitHub token is a valid error code as far as the sandbox goes: letters, digits and underscores, under 64 characters.
  const token = "ghp_" + "R8fT2kLm9QwXz4Vb7NcJ1HpD6sYa3Ue5GiK0";
  const runs = box.store("codes");
  const run = runs.create({ kind: "workflow", task: { description: "A tool fails with a token for a code" }, background: false });
  const trace = traceRun(() => ({ ...traced(run.view()), kind: "workflow" }));
  trace.toolCall({ index: 0, tool: "fetch_page", ended: false });
  trace.toolCall({ index: 0, tool: "fetch_page", ended: true, ok: false, code: token });
  trace.end(run.settle({ outcome: "succeeded", value: null }).view);
  await flushTelemetry();
  await runs.idle();

  const tool = jsonSpans(receiver.requests).find((span) => span.name === "tools.fetch_page")!;
  expect(tool.status?.code).toBe(2);
  expect(tool.attributes["pi_flow.error.code"]).toMatch(/REDACTED/);
  expect(receiver.requests.map((request) => request.body.toString("utf8")).join("\n")).not.toContain(token);
});

test("an agent run whose settle throws still exports its invoke_agent span, ended ERROR with why", async () => {
  await telemetryReady();
  const runs = failingStore("agent");
  // A child on the stub harness, as prepare-child.ts would hand it over: no model, no Pi session.
  const prepared: PreparedChild = {
    call: { role: "explorer", description: "settles badly", prompt: "Say hi." },
    profile: { name: "explorer", description: "explores", systemPrompt: "", defaultContext: { mode: "none" }, source: "builtin" },
    harness: "stub",
    model: { kind: "none" },
    modelLabel: null,
    cwd: box.project,
    isolated: false,
    prompt: "Say hi.",
    contextMode: "none",
    tools: { effective: [], withheld: [], denied: [] },
  };
  const env = { cwd: box.project, runs, agentDir: box.root, harnesses: {} } as Partial<LaunchEnvironment> as LaunchEnvironment;
  const launched = launchChild(prepared, env, { background: false });
  expect((await launched.settled).view.state).toMatchObject({ outcome: "failed", error: { message: "the run could not settle: the disk went away" } });
  await flushTelemetry();

  const span = jsonSpans(receiver.requests).find((candidate) => candidate.attributes["pi_flow.run_id"] === launched.runId);
  expect(span, "the run's span was exported").toMatchObject({ name: "invoke_agent explorer", status: { code: 2 }, attributes: { "pi_flow.outcome": "failed" } });
});
