import { afterAll, expect, test, vi } from "vitest";
import { hostileStatusCollector } from "../support/otlp-receiver.ts";

// A Pi session exporting to a collector whose every answer is a 400 with terminal escapes in its
// status text: `/flow doctor`'s traces line says the export failed, in plain text on one line.
const collector = await hostileStatusCollector();
// Tracing is configured by the environment the process starts with: set it before pi-flow loads.
vi.stubEnv("OTEL_TRACES_EXPORTER", "otlp");
vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint);
vi.stubEnv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
const { startPiSession } = await import("../support/pi-session.ts");
const { childAnswers } = await import("../support/children.ts");
const { flushTelemetry, telemetryReady } = await import("../../src/telemetry/index.ts");

const pi = await startPiSession();
afterAll(async () => {
  await pi.dispose();
  await collector.close();
  vi.unstubAllEnvs();
});

test("/flow doctor's traces line shows a collector's status text as one line of plain text, its terminal escapes removed", async () => {
  await telemetryReady();
  await pi.callTool("external_delegate", { role: "explorer", description: "Count", prompt: "Count the files.", context: { mode: "none" } }, { children: [childAnswers("Twelve.")] });
  await flushTelemetry(); // the spans go now, rather than when the batch's timer says

  await pi.session.prompt("/flow doctor");
  const printed = pi.session.sessionManager.getEntries().filter((entry) => entry.type === "custom" && entry.customType === "pi-flow-output").at(-1) as { data: { lines: string[] } };
  const traces = printed.data.lines.find((line) => line.startsWith("traces"))!;
  expect(traces).toMatch(/^traces {3}OTLP http\/json to http:\/\/127\.0\.0\.1:\d+\/v1\/traces; spans could not be exported \(http\/json\): .*Bad Request$/);
  expect(traces).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
  expect(traces).not.toContain("52;c;");
});
