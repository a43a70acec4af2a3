import type { Tracer } from "@opentelemetry/api";
import type { Sampler, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace";
import { readFileSync } from "node:fs";
import type { Agent as HttpAgent } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import { resolve } from "node:path";
import type { Duplex } from "node:stream";
import type { OtlpProtocol } from "./config.ts";
import { resourceAttributes } from "./resource.ts";
import { samplingFromEnv, spanLimitsFromEnv, type Sampling } from "./sampling.ts";

/**
 * The tracer provider, loaded only when tracing is configured: the SDK and one OTLP/HTTP exporter
 * are imported then, never at extension load otherwise. Spans leave in batches off the run's path;
 * an export that fails (a dead collector, a refused connection) is reported to `onProblem` once
 * per kind of failure and never reaches a run.
 *
 * Every export has the exporter's timeout (OTEL_EXPORTER_OTLP_TIMEOUT) as an absolute deadline.
 * The exporter's own timeout is only an idle timeout on its socket: a collector that answers 200
 * and then sends its body a byte at a time never trips it, and would hold a flush (and `flow run`'s
 * exit) for the SDK's 30 s, and each such export's buffers for ever. Past the deadline the export
 * is failed and its batch dropped, and its connection is closed, so nothing it held stays.
 */
export interface LoadedTracing {
  tracer: Tracer;
  /**
   * Sends every ended span now; resolves when every export, this flush's and any already going,
   * is answered, given up, or past the export timeout.
   */
  flush(): Promise<void>;
}

/**
 * The longest export timeout kept: Node's timers take at most 2^31 - 1 ms (about 24.8 days) and
 * fire after 1 ms past it, which would fail every export at once; the processor's backstop adds 1 s.
 */
const LONGEST_TIMEOUT_MILLIS = 2_147_483_647 - 1000;

/**
 * What the exporter's timeout is, read as the exporter reads it: the traces variable, else the
 * general one, else 10 s; at most LONGEST_TIMEOUT_MILLIS (the exporter is given this one).
 */
export function exportTimeoutMillis(env: Readonly<Record<string, string | undefined>>): number {
  for (const name of ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"]) {
    const text = env[name]?.trim();
    const value = text ? Number(text) : Number.NaN;
    if (Number.isFinite(value) && value > 0) return Math.min(value, LONGEST_TIMEOUT_MILLIS);
  }
  return 10_000;
}

/**
 * Exports at once, at most: the batch processor's scheduled one, and a flush's batches (a queue of
 * 2,048 spans in batches of 512). The SDK allows 30, each holding its request and up to 4 MiB of
 * answer; past the limit an export fails at once, its batch dropped, as any failed export's is.
 */
export const CONCURRENT_EXPORTS = 5;

/**
 * The most ended spans that wait for the collector (the SDK's default, said here so the count below
 * agrees with it). A span that ends while the queue is full is dropped: spans ended faster than the
 * collector took them (a fan-out whose children end together, a slow collector).
 */
const QUEUE_SIZE = 2048;

/** Said once when the batch processor drops a span: it tells no one but a diagnostic logger pi-flow does not install. */
const DROPPED = `spans were dropped: more than ${QUEUE_SIZE} ended spans waited for the collector at once; the trace is incomplete`;

/**
 * The batch processor's queue, counted as it counts it: an ended (sampled) span joins it unless it
 * holds QUEUE_SIZE already, and a batch leaves it as the processor hands it to the exporter, at once.
 * A span that finds it full is dropped, and `onDrop` is told.
 */
function queueCount(onDrop: () => void): { left(count: number): void; around(inner: SpanProcessor): SpanProcessor } {
  let queued = 0;
  return {
    left: (count) => {
      queued = Math.max(0, queued - count);
    },
    around: (inner) => ({
      onStart: (span, parent) => inner.onStart(span, parent),
      onEnd: (span) => {
        const sampled = (span.spanContext().traceFlags & 1) === 1;
        if (sampled && queued >= QUEUE_SIZE) onDrop();
        else if (sampled) queued++;
        inner.onEnd(span);
      },
      forceFlush: () => inner.forceFlush(),
      shutdown: () => inner.shutdown(),
    }),
  };
}

/** Tells `taken` how many spans each export is handed, as the processor hands them over. */
function counted(inner: SpanExporter, taken: (count: number) => void): SpanExporter {
  return {
    export: (spans, done) => {
      taken(spans.length);
      inner.export(spans, done);
    },
    shutdown: () => inner.shutdown(),
    ...(inner.forceFlush ? { forceFlush: () => inner.forceFlush!() } : {}),
  };
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

/**
 * An export not over by `timeoutMillis` fails there: its batch is dropped, and what comes of it
 * later is ignored. `going` holds the exports not over yet: the SDK's flush sends only the spans
 * still queued, and resolves at once when a scheduled export (or another flush) took them already,
 * so a process that exits after it would drop those spans in flight.
 */
function bounded(inner: SpanExporter, timeoutMillis: number, going: Set<Promise<void>>): SpanExporter {
  return {
    export: (spans, done) => {
      let over = false;
      let settle = () => {};
      const exporting = new Promise<void>((resolve) => (settle = resolve));
      going.add(exporting);
      const finish: typeof done = (result) => {
        if (over) return;
        over = true;
        clearTimeout(deadline);
        going.delete(exporting);
        settle();
        done(result);
      };
      const deadline = setTimeout(() => finish({ code: 1, error: new Error(`the collector did not finish answering within ${timeoutMillis} ms`) }), timeoutMillis);
      inner.export(spans, finish);
    },
    shutdown: () => inner.shutdown(),
    ...(inner.forceFlush ? { forceFlush: () => inner.forceFlush!() } : {}),
  };
}

/** A certificate or key file the exporter's OTEL_EXPORTER_OTLP_[TRACES_]* variable names, as the exporter reads it; undefined when unset or unreadable. */
function certificateFile(name: string): Buffer | undefined {
  const path = process.env[`OTEL_EXPORTER_OTLP_TRACES_${name}`]?.trim() || process.env[`OTEL_EXPORTER_OTLP_${name}`]?.trim();
  if (!path) return undefined;
  try {
    return readFileSync(resolve(process.cwd(), path));
  } catch {
    return undefined;
  }
}

/**
 * The exporter's HTTP agent, as the exporter would make it (keep-alive; for https the certificate
 * files its variables name), but no request on it lives past `timeoutMillis`: a socket is given
 * that long from when a request takes it until it is free again, then closed. The request fails,
 * and with it the export, which the SDK then lets go of.
 */
function agentWithDeadline(timeoutMillis: number): (protocol: string) => Promise<HttpAgent | HttpsAgent> {
  return async (protocol) => {
    const agent: HttpAgent | HttpsAgent =
      protocol === "http:"
        ? new (await import("node:http")).Agent({ keepAlive: true })
        : new (await import("node:https")).Agent({ keepAlive: true, ca: certificateFile("CERTIFICATE"), cert: certificateFile("CLIENT_CERTIFICATE"), key: certificateFile("CLIENT_KEY") });
    const deadlines = new Map<Duplex, NodeJS.Timeout>();
    /** Sockets already told to forget their deadline when they close: a kept-alive one takes many requests. */
    const known = new WeakSet<Duplex>();
    const free = (socket: Duplex) => {
      clearTimeout(deadlines.get(socket));
      deadlines.delete(socket);
    };
    const busy = (socket: Duplex) => {
      if (!known.has(socket)) {
        known.add(socket);
        socket.once("close", () => free(socket));
      }
      clearTimeout(deadlines.get(socket));
      deadlines.set(socket, setTimeout(() => socket.destroy(), timeoutMillis));
    };
    agent.on("free", free);
    const createConnection = agent.createConnection.bind(agent);
    agent.createConnection = ((...args: Parameters<typeof createConnection>) => {
      const socket = createConnection(...args);
      if (socket) busy(socket);
      return socket;
    }) as typeof agent.createConnection;
    const reuseSocket = agent.reuseSocket.bind(agent);
    agent.reuseSocket = ((socket, request) => {
      busy(socket);
      reuseSocket(socket, request);
    }) as typeof agent.reuseSocket;
    return agent;
  };
}

type SdkTrace = typeof import("@opentelemetry/sdk-trace");

/** The SDK's sampler for what OTEL_TRACES_SAMPLER and its argument say. */
function sampler(sdk: SdkTrace, sampling: Sampling): Sampler {
  const root =
    sampling.root.kind === "always_on" ? new sdk.AlwaysOnSampler() : sampling.root.kind === "always_off" ? new sdk.AlwaysOffSampler() : new sdk.TraceIdRatioBasedSampler(sampling.root.ratio);
  return sampling.parentBased ? new sdk.ParentBasedSampler({ root }) : root;
}

export async function loadTracing(protocol: OtlpProtocol, version: string, onProblem: (message: string) => void): Promise<LoadedTracing> {
  const [sdk, { resourceFromAttributes }, exporterModule] = await Promise.all([
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/resources"),
    protocol === "http/json" ? import("@opentelemetry/exporter-trace-otlp-http") : import("@opentelemetry/exporter-trace-otlp-proto"),
  ]);
  const { BatchSpanProcessor, TracerProvider } = sdk;
  const timeoutMillis = exportTimeoutMillis(process.env);
  // The processor's and the provider's waits (the SDK's 30 s each) end a moment after the export's
  // deadline: they only back it up, and the export's own failure says what went wrong.
  const backstop = timeoutMillis + 1000;
  const otlp = new exporterModule.OTLPTraceExporter({ concurrencyLimit: CONCURRENT_EXPORTS, timeoutMillis, httpAgentOptions: agentWithDeadline(timeoutMillis) });
  const going = new Set<Promise<void>>();
  const exporter = watched(bounded(otlp, timeoutMillis, going), (message) => onProblem(`spans could not be exported (${protocol}): ${message}`));
  const queue = queueCount(() => onProblem(DROPPED));
  const batches = new BatchSpanProcessor({ exporter: counted(exporter, queue.left), exportTimeoutMillis: backstop, maxQueueSize: QUEUE_SIZE });
  const provider = new TracerProvider({
    resource: resourceFromAttributes(resourceAttributes(process.env, version, onProblem)),
    sampler: sampler(sdk, samplingFromEnv(process.env, onProblem)),
    spanLimits: spanLimitsFromEnv(process.env, onProblem),
    spanProcessors: [queue.around(batches)],
  });
  const flush = async () => {
    try {
      await provider.forceFlush({ timeoutMillis: backstop });
    } finally {
      await Promise.all(going); // each ends by its deadline
    }
  };
  return { tracer: provider.getTracer("pi-flow", version), flush };
}
