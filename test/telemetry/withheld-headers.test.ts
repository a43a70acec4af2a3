import { afterAll, expect, test, vi } from "vitest";
import { startOtlpReceiver } from "../support/otlp-receiver.ts";

// `flow run` and `flow worker` take the collector's headers out of their environment before any
// child starts (test/telemetry/hostile-collector.test.ts shows a child's bash finding them empty),
// but not those the user passes on to claude or codex children, which export telemetry of their own.
const receiver = await startOtlpReceiver();
vi.stubEnv("OTEL_TRACES_EXPORTER", "otlp");
vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint);
vi.stubEnv("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-key=pi-flow-only");
vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "authorization=Bearer shared-with-claude");
vi.stubEnv("PI_FLOW_CLAUDE_ENV", "CLAUDE_CODE_ENABLE_TELEMETRY OTEL_EXPORTER_OTLP_TRACES_*");
const { startTelemetry } = await import("../../src/command-line/telemetry.ts");
afterAll(async () => {
  await receiver.close();
  vi.unstubAllEnvs();
});

test("a header variable PI_FLOW_CLAUDE_ENV passes to claude children stays in the environment; the other one leaves it", async () => {
  await startTelemetry();
  expect(process.env.OTEL_EXPORTER_OTLP_HEADERS).toBeUndefined();
  expect(process.env.OTEL_EXPORTER_OTLP_TRACES_HEADERS).toBe("authorization=Bearer shared-with-claude");
});
