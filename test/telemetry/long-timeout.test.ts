import { afterAll, expect, test, vi } from "vitest";
import { jsonSpans, startOtlpReceiver } from "../support/otlp-receiver.ts";
import { exportTimeoutMillis, loadTracing } from "../../src/telemetry/provider.ts";

// An export timeout longer than Node's timers take (2^31 - 1 ms, about 24.8 days), as an operator
// who means "never give up" might write it: Node would fire such a timer after 1 ms instead.
const receiver = await startOtlpReceiver();
afterAll(async () => {
  await receiver.close();
  vi.unstubAllEnvs();
});

test("a timeout past what Node's timers take still exports the spans, with no warning, as the longest timeout Node keeps", async () => {
  vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", `${receiver.endpoint}/v1/traces`);
  vi.stubEnv("OTEL_EXPORTER_OTLP_TIMEOUT", "3000000000");
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on("warning", onWarning);
  const problems: string[] = [];
  try {
    const tracing = await loadTracing("http/json", "9.9.9", (message) => problems.push(message));
    tracing.tracer.startSpan("kept").end();
    await tracing.flush();
  } finally {
    process.off("warning", onWarning);
  }
  expect(jsonSpans(receiver.requests).map((span) => span.name)).toEqual(["kept"]);
  expect(problems).toEqual([]);
  expect(warnings).not.toContain("TimeoutOverflowWarning");
  expect(exportTimeoutMillis({ OTEL_EXPORTER_OTLP_TIMEOUT: "3000000000" })).toBe(2_147_482_647);
});
