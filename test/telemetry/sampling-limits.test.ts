import { context, trace } from "@opentelemetry/api";
import { afterAll, expect, test, vi } from "vitest";
import { jsonSpans, startOtlpReceiver, type JsonSpan } from "../support/otlp-receiver.ts";
import { loadTracing } from "../../src/telemetry/provider.ts";

// OTEL_TRACES_SAMPLER, its argument and the span limits, read as OpenTelemetry's SDK environment
// says, as the collector sees the spans they let through.
const receiver = await startOtlpReceiver();
afterAll(async () => {
  await receiver.close();
  vi.unstubAllEnvs();
});

/** A sampled remote parent, as a coordinator's traceparent names one. */
const SAMPLED_PARENT = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1, isRemote: true };

/** Loads tracing with `env`, ends a root span and a span under a sampled remote parent, and answers what reached the collector and the problems said. */
async function exported(env: Record<string, string>, decorate: (span: import("@opentelemetry/api").Span) => void = () => {}): Promise<{ spans: JsonSpan[]; problems: string[] }> {
  vi.unstubAllEnvs();
  vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", `${receiver.endpoint}/v1/traces`);
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const seen = receiver.requests.length;
  const problems: string[] = [];
  const tracing = await loadTracing("http/json", "9.9.9", (message) => problems.push(message));
  const root = tracing.tracer.startSpan("root");
  decorate(root);
  root.end();
  tracing.tracer.startSpan("under a sampled parent", {}, trace.setSpanContext(context.active(), SAMPLED_PARENT)).end();
  await tracing.flush();
  return { spans: jsonSpans(receiver.requests.slice(seen)), problems };
}
const names = (spans: JsonSpan[]) => spans.map((span) => span.name).sort();

test("OTEL_TRACES_SAMPLER: always_off exports nothing, a ratio of 0 drops roots, and the parentbased_ forms keep a sampled parent's spans", async () => {
  expect(names((await exported({})).spans)).toEqual(["root", "under a sampled parent"]);
  expect((await exported({ OTEL_TRACES_SAMPLER: "always_off" })).spans).toEqual([]);
  expect(names((await exported({ OTEL_TRACES_SAMPLER: "Always_On" })).spans)).toEqual(["root", "under a sampled parent"]);
  expect((await exported({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" })).spans).toEqual([]);
  expect(names((await exported({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" })).spans)).toEqual(["under a sampled parent"]);
  expect(names((await exported({ OTEL_TRACES_SAMPLER: "parentbased_always_off" })).spans)).toEqual(["under a sampled parent"]);
  // Without an argument the ratio is 1.0: every root is kept.
  const whole = await exported({ OTEL_TRACES_SAMPLER: "traceidratio" });
  expect(names(whole.spans)).toEqual(["root", "under a sampled parent"]);
  expect(whole.problems).toEqual([]);
});

test("a sampler pi-flow does not have, or a ratio outside [0, 1], is said once and the default used", async () => {
  const unknown = await exported({ OTEL_TRACES_SAMPLER: "jaeger_remote" });
  expect(names(unknown.spans)).toEqual(["root", "under a sampled parent"]);
  expect(unknown.problems).toEqual([expect.stringMatching(/^OTEL_TRACES_SAMPLER names a sampler pi-flow does not have .*; parentbased_always_on is used/)]);
  for (const argument of ["1.5", "-0.1", "half"]) {
    const bad = await exported({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: argument });
    expect(names(bad.spans), argument).toEqual(["root", "under a sampled parent"]);
    expect(bad.problems).toEqual(["OTEL_TRACES_SAMPLER_ARG is not a ratio from 0 to 1; 1.0 is used"]);
  }
});

const decorated = (span: import("@opentelemetry/api").Span) => {
  span.setAttributes({ first: "abcdefghijklmnop", second: "two", third: "three" });
  for (const event of ["one", "two", "three"]) span.addEvent(event);
};
const rootOf = (spans: JsonSpan[]) => spans.find((span) => span.name === "root")!;

test("the span limits cut attribute values, and cap a span's attributes and events", async () => {
  const unlimited = rootOf((await exported({}, decorated)).spans);
  expect(unlimited.attributes).toEqual({ first: "abcdefghijklmnop", second: "two", third: "three" });
  expect(unlimited.events).toHaveLength(3);

  const { spans, problems } = await exported({ OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: "4", OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: "2", OTEL_SPAN_EVENT_COUNT_LIMIT: "1" }, decorated);
  expect(problems).toEqual([]);
  const limited = rootOf(spans);
  expect(limited.attributes).toEqual({ first: "abcd", second: "two" });
  expect(limited.events.map((event) => event.name)).toEqual(["three"]);
  // The general length limit counts when the span's own is unset.
  expect(rootOf((await exported({ OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: "3" }, decorated)).spans).attributes.first).toBe("abc");
});

test("a limit that is not a whole number of 0 or more is said once and ignored: the general variable, or the default, counts", async () => {
  const { spans, problems } = await exported({ OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: "-4", OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: "5", OTEL_SPAN_EVENT_COUNT_LIMIT: "2.5" }, decorated);
  expect(rootOf(spans).attributes.first).toBe("abcde");
  expect(rootOf(spans).events).toHaveLength(3);
  expect(problems).toEqual(["OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT is not a whole number of 0 or more; it is ignored", "OTEL_SPAN_EVENT_COUNT_LIMIT is not a whole number of 0 or more; it is ignored"]);
});
