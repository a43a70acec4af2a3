/**
 * Whether and where pi-flow exports traces, from OpenTelemetry's standard environment variables:
 * OTEL_TRACES_EXPORTER=otlp turns it on (OTEL_SDK_DISABLED=true turns it off again), the endpoint is
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as written) or OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces),
 * and the protocol OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf
 * (the spec's default) or http/json. Headers, timeout and compression are the exporter's own
 * OTEL_EXPORTER_OTLP_* variables, read by the exporter itself.
 */
export type OtlpProtocol = "http/protobuf" | "http/json";

export type TracingConfig =
  | { on: false }
  | { on: true; protocol: OtlpProtocol }
  /** Asked for, but not in a way pi-flow can serve: said once as a warning, nothing exported. */
  | { on: false; problem: string };

type Env = Readonly<Record<string, string | undefined>>;

const set = (value: string | undefined): string | undefined => (value === undefined || value.trim() === "" ? undefined : value.trim());

export function tracingConfig(env: Env): TracingConfig {
  if (set(env.OTEL_SDK_DISABLED)?.toLowerCase() === "true") return { on: false };
  const exporters = (set(env.OTEL_TRACES_EXPORTER) ?? "none").split(",").map((name) => name.trim().toLowerCase());
  if (!exporters.includes("otlp")) return { on: false };
  const protocol = set(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? set(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    return { on: false, problem: `OTEL_EXPORTER_OTLP_PROTOCOL ${JSON.stringify(protocol)} is not supported by pi-flow: use http/protobuf or http/json` };
  }
  return { on: true, protocol };
}

/**
 * Where the exporter sends spans, read as it reads it: the traces endpoint as written, else the
 * general one with `/v1/traces` added, else the spec's default. A variable set to blank is unset.
 */
export function tracesEndpoint(env: Env): string {
  const traces = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (traces !== undefined) return traces;
  const base = set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (base !== undefined) return `${base.endsWith("/") ? base : `${base}/`}v1/traces`;
  return "http://localhost:4318/v1/traces";
}

/** `flow.telemetry.content` (or PI_FLOW_TELEMETRY_CONTENT=1): prompts and answers go on spans, redacted. Off by default. */
export function contentWanted(setting: unknown, env: Env): boolean {
  if (set(env.PI_FLOW_TELEMETRY_CONTENT) !== undefined) return env.PI_FLOW_TELEMETRY_CONTENT === "1" || env.PI_FLOW_TELEMETRY_CONTENT === "true";
  return setting === true;
}
