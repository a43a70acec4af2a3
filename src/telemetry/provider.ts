import type { Tracer } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { OtlpProtocol } from "./config.ts";

/**
 * The tracer provider, loaded only when tracing is configured: the SDK and one OTLP/HTTP exporter
 * are imported then, never at extension load otherwise. Spans leave in batches off the run's path;
 * an export that fails (a dead collector, a refused connection) is reported to `onProblem` once
 * per kind of failure and never reaches a run.
 *
 * Every export has the exporter's timeout (OTEL_EXPORTER_OTLP_TIMEOUT) as an absolute deadline.
 * The exporter's own timeout is only an idle timeout on its socket: a collector that answers 200
 * and then sends its body a byte at a time never trips it, and would hold a flush (and `flow run`'s
 * exit) for the SDK's 30 s. Past the deadline the export is failed and its batch dropped.
 */
export interface LoadedTracing {
  tracer: Tracer;
  /** Sends every ended span now; resolves when the exporter answered, gave up, or the export timeout passed. */
  flush(): Promise<void>;
}

/** What the exporter's timeout is, read as the exporter reads it: the traces variable, else the general one, else 10 s. */
export function exportTimeoutMillis(env: Readonly<Record<string, string | undefined>>): number {
  for (const name of ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"]) {
    const text = env[name]?.trim();
    const value = text ? Number(text) : Number.NaN;
    if (Number.isFinite(value) && value > 0) return value;
  }
  return 10_000;
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

/** An export not over by `timeoutMillis` fails there: its batch is dropped, and what comes of it later is ignored. */
function bounded(inner: SpanExporter, timeoutMillis: number): SpanExporter {
  return {
    export: (spans, done) => {
      let over = false;
      const finish: typeof done = (result) => {
        if (over) return;
        over = true;
        clearTimeout(deadline);
        done(result);
      };
      const deadline = setTimeout(() => finish({ code: 1, error: new Error(`the collector did not finish answering within ${timeoutMillis} ms`) }), timeoutMillis);
      inner.export(spans, finish);
    },
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
  const timeoutMillis = exportTimeoutMillis(process.env);
  // The processor's and the provider's waits (the SDK's 30 s each) end a moment after the export's
  // deadline: they only back it up, and the export's own failure says what went wrong.
  const backstop = timeoutMillis + 1000;
  const otlp = new exporterModule.OTLPTraceExporter();
  const exporter = watched(bounded(otlp, timeoutMillis), (message) => onProblem(`spans could not be exported (${protocol}): ${message}`));
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME ?? "pi-flow", "service.version": version }),
    spanProcessors: [new BatchSpanProcessor({ exporter, exportTimeoutMillis: backstop })],
  });
  return { tracer: provider.getTracer("pi-flow", version), flush: () => provider.forceFlush({ timeoutMillis: backstop }) };
}
