import type { Tracer } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { OtlpProtocol } from "./config.ts";

/**
 * The tracer provider, loaded only when tracing is configured: the SDK and one OTLP/HTTP exporter
 * are imported then, never at extension load otherwise. Spans leave in batches off the run's path;
 * an export that fails (a dead collector, a refused connection) is reported to `onProblem` once
 * per kind of failure and never reaches a run.
 */
export interface LoadedTracing {
  tracer: Tracer;
  /** Sends every ended span now; resolves when the exporter answered (or gave up). */
  flush(): Promise<void>;
}

/** Passes spans through, and tells the first failed export (a dead collector fails every one after it too). */
function watched(inner: SpanExporter, onFailure: (message: string) => void): SpanExporter {
  let told = false;
  return {
    export: (spans, done) =>
      inner.export(spans, (result) => {
        if (result.code !== 0 && !told) {
          told = true;
          onFailure(result.error?.message ?? "the collector did not accept the spans");
        }
        done(result);
      }),
    shutdown: () => inner.shutdown(),
    ...(inner.forceFlush ? { forceFlush: () => inner.forceFlush!() } : {}),
  };
}

export async function loadTracing(protocol: OtlpProtocol, version: string, onProblem: (message: string) => void): Promise<LoadedTracing> {
  const [{ BatchSpanProcessor, TracerProvider }, { resourceFromAttributes }, exporterModule] = await Promise.all([
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/resources"),
    protocol === "http/json" ? import("@opentelemetry/exporter-trace-otlp-http") : import("@opentelemetry/exporter-trace-otlp-proto"),
  ]);
  const exporter = watched(new exporterModule.OTLPTraceExporter(), (message) => onProblem(`spans could not be exported (${protocol}): ${message}`));
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME ?? "pi-flow", "service.version": version }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  return { tracer: provider.getTracer("pi-flow", version), flush: () => provider.forceFlush() };
}
