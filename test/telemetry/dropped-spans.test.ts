import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { jsonSpans, startOtlpReceiver } from "../support/otlp-receiver.ts";

// Spans end faster than the collector takes them (a fan-out whose children end together, a slow
// collector): the batch processor keeps 2,048 ended spans waiting and drops the rest. The trace is
// then incomplete, and the user is told so, as of every other export problem.
const receiver = await startOtlpReceiver();
// Tracing is configured by the environment the process starts with: set it before pi-flow loads.
vi.stubEnv("OTEL_TRACES_EXPORTER", "otlp");
vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint);
vi.stubEnv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
const { flushTelemetry, telemetryProblems, telemetryReady, traceRun, traced } = await import("../../src/telemetry/index.ts");
const { openRunStore, RunRegistry } = await import("../../src/runs/index.ts");

const dir = mkdtempSync(join(tmpdir(), "pi-flow-dropped-spans-"));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await receiver.close();
  vi.unstubAllEnvs();
});

test("spans that end while 2,048 already wait for the collector are dropped, and that is said once, as an export problem", async () => {
  await telemetryReady();
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "workflow", task: { description: "Many quick calls" }, background: false });
  const trace = traceRun(() => ({ ...traced(run.view()), kind: "workflow" }));
  // 2,600 tools.* calls ending at once: the first 512 leave as a batch, the next 2,048 wait, the last 40 find no room.
  for (let index = 0; index < 2600; index++) {
    trace.toolCall({ index, tool: "external_runs", ended: false });
    trace.toolCall({ index, tool: "external_runs", ended: true, ok: true });
  }
  await flushTelemetry();
  trace.end(run.settle({ outcome: "succeeded", value: { result: 2600 } }).view);
  await flushTelemetry();
  await store.idle();

  const spans = jsonSpans(receiver.requests);
  expect(spans.filter((span) => span.name === "tools.external_runs")).toHaveLength(2560);
  expect(spans.filter((span) => span.name === "workflow inline")).toHaveLength(1);
  const dropped = telemetryProblems().filter((problem) => problem.includes("dropped"));
  expect(dropped).toEqual(["spans were dropped: more than 2048 ended spans waited for the collector at once; the trace is incomplete"]);
});
