import { expect, test } from "vitest";
import { contentWanted, tracesEndpoint, tracingConfig } from "../../src/telemetry/config.ts";
import { formatTraceparent, parseTraceparent } from "../../src/telemetry/remote-trace.ts";
import { exportTimeoutMillis } from "../../src/telemetry/provider.ts";
import { isRemoteChildRequest } from "../../src/backends/remote-child.ts";

/** A child request as a coordinator queues it (src/backends/remote-child.ts). */
const QUEUED = {
  workflowId: "wf_1/agent/0",
  runId: "ag_1",
  harness: "stub",
  model: null,
  profile: { name: "explorer" },
  task: { agent: "role:explorer", description: "Part 1" },
  prompt: "Look.",
  cwd: ".",
  loading: { projectTrusted: true, isolated: false },
};

test("tracing is on only when OTEL_TRACES_EXPORTER names otlp, and OTEL_SDK_DISABLED turns it off again", () => {
  expect(tracingConfig({})).toEqual({ on: false });
  expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toEqual({ on: false });
  expect(tracingConfig({ OTEL_TRACES_EXPORTER: "none" })).toEqual({ on: false });
  expect(tracingConfig({ OTEL_TRACES_EXPORTER: "console, otlp" })).toEqual({ on: true, protocol: "http/protobuf" });
  expect(tracingConfig({ OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "true" })).toEqual({ on: false });
});

test("the protocol is the traces variable's, else the general one's, else http/protobuf; grpc is refused with a reason", () => {
  expect(tracingConfig({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toEqual({ on: true, protocol: "http/json" });
  expect(tracingConfig({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf" })).toEqual({ on: true, protocol: "http/protobuf" });
  const grpc = tracingConfig({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
  expect(grpc).toEqual({ on: false, problem: expect.stringMatching(/"grpc" is not supported by pi-flow: use http\/protobuf or http\/json/) });
});

test("/flow doctor names the URL the spans go to, as the exporter reads the variables: a blank traces endpoint is unset, the general one gets /v1/traces", () => {
  expect(tracesEndpoint({})).toBe("http://localhost:4318/v1/traces");
  expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example:4318" })).toBe("https://collector.example:4318/v1/traces");
  expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example/otlp/" })).toBe("https://collector.example/otlp/v1/traces");
  expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/in" })).toBe("https://traces.example/in");
  expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: " " })).toBe("https://collector.example/v1/traces");
});

test("prompts and answers go on spans only when flow.telemetry.content or PI_FLOW_TELEMETRY_CONTENT says so", () => {
  expect(contentWanted(undefined, {})).toBe(false);
  expect(contentWanted("yes", {})).toBe(false);
  expect(contentWanted(true, {})).toBe(true);
  expect(contentWanted(true, { PI_FLOW_TELEMETRY_CONTENT: "0" })).toBe(false);
  expect(contentWanted(undefined, { PI_FLOW_TELEMETRY_CONTENT: "1" })).toBe(true);
});

test("a worker trusts only a well-formed W3C traceparent from a queued child: anything else starts no span under it", () => {
  const context = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 };
  expect(formatTraceparent(context)).toBe("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  expect(parseTraceparent(formatTraceparent(context))).toEqual(context);
  for (const bad of ["", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "00-4bf92f-00f067aa0ba902b7-01 "]) {
    expect(parseTraceparent(bad)).toBeUndefined();
  }
  expect(isRemoteChildRequest({ ...QUEUED, traceparent: 7 })).toBe(false);
  expect(isRemoteChildRequest({ ...QUEUED, traceparent: formatTraceparent(context) })).toBe(true);
});

test("an export's deadline is the exporter's timeout, read as the exporter reads it: the traces variable, else the general one, else 10 s", () => {
  expect(exportTimeoutMillis({})).toBe(10_000);
  expect(exportTimeoutMillis({ OTEL_EXPORTER_OTLP_TIMEOUT: "1500" })).toBe(1500);
  expect(exportTimeoutMillis({ OTEL_EXPORTER_OTLP_TIMEOUT: "1500", OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "700" })).toBe(700);
  for (const invalid of ["0", "-5", "soon", " "]) expect(exportTimeoutMillis({ OTEL_EXPORTER_OTLP_TIMEOUT: invalid })).toBe(10_000);
  expect(exportTimeoutMillis({ OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "never", OTEL_EXPORTER_OTLP_TIMEOUT: "2000" })).toBe(2000);
});
