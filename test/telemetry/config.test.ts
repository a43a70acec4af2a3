import { expect, test } from "vitest";
import { contentWanted, tracingConfig } from "../../src/telemetry/config.ts";

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

test("prompts and answers go on spans only when flow.telemetry.content or PI_FLOW_TELEMETRY_CONTENT says so", () => {
  expect(contentWanted(undefined, {})).toBe(false);
  expect(contentWanted("yes", {})).toBe(false);
  expect(contentWanted(true, {})).toBe(true);
  expect(contentWanted(true, { PI_FLOW_TELEMETRY_CONTENT: "0" })).toBe(false);
  expect(contentWanted(undefined, { PI_FLOW_TELEMETRY_CONTENT: "1" })).toBe(true);
});
