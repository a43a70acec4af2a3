import type { Span, SpanContext } from "@opentelemetry/api";
import type { ChildDiagnostic, ChildProgress, ChildResult } from "../harnesses/index.ts";
import { modelName, spanText, usageAttributes, type Attributes } from "./attributes.ts";
import { RunTrace } from "./run-trace.ts";
import { guarded, loadedTracing, openRunSpan, reportTracingProblem } from "./tracing.ts";

/**
 * A run whose child runs in another process (the dbos backend's `flow worker`): the coordinator
 * sends its run span's context with the child's request as a W3C `traceparent`
 * (https://www.w3.org/TR/trace-context/), and the worker starts the child's span under it, so both
 * processes' spans are one trace. Lifecycle on the worker: `traceWorkerChild` when it takes the
 * child → hooks while the harness runs (turns, tool calls) → `end` with the harness's result, or
 * `endHandedBack` when the worker stops first and hands the child back to the queue.
 */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export function formatTraceparent(context: Pick<SpanContext, "traceId" | "spanId" | "traceFlags">): string {
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The span context a traceparent names; undefined for anything else (the all-zero IDs are invalid). */
export function parseTraceparent(text: string): Pick<SpanContext, "traceId" | "spanId" | "traceFlags"> | undefined {
  const match = TRACEPARENT.exec(text);
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
  return { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16) };
}

/** The traceparent of run `runId`'s open span in this process; undefined when it has none (tracing off). */
export function runTraceparent(runId: string): string | undefined {
  const span = openRunSpan(runId);
  return span ? formatTraceparent(span.spanContext()) : undefined;
}

export interface WorkerChild {
  runId: string;
  /** The DBOS workflow the child is (`<rootRunId>/agent/<index>`). */
  workflowId: string;
  /** The worker running it, as `flow worker` names itself. */
  worker: string;
  /** The role or Pi agent definition it runs as. */
  role: string;
  description: string;
  harness: string;
  model: string | null;
  /** The coordinator's run span, when it traces. */
  traceparent?: string;
  /** The child's line of work, as its run on the coordinator says; its own run ID when absent. */
  correlationId?: string;
}

export interface WorkerTraceHooks {
  progress(progress: ChildProgress): void;
  diagnostic(entry: ChildDiagnostic): void;
  output(text: string): void;
  end(result: ChildResult): void;
}

const NOOP: WorkerTraceHooks = { progress() {}, diagnostic() {}, output() {}, end() {} };

/** Children this worker is tracing now: a stop hands them back, and their spans end saying so. */
const running = new Set<RunTrace>();

/** Starts the worker's span of one child, under the coordinator's run span when the request carries it. */
export function traceWorkerChild(child: WorkerChild): WorkerTraceHooks {
  const loaded = loadedTracing();
  if (!loaded) return NOOP;
  try {
    const parent = child.traceparent === undefined ? undefined : parseTraceparent(child.traceparent);
    const model = modelName(child.model ?? undefined);
    const attributes: Attributes = {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": child.role,
      "pi_flow.run_id": child.runId,
      "pi_flow.correlation_id": child.correlationId ?? child.runId,
      "pi_flow.kind": "agent",
      "pi_flow.description": spanText(child.description, 200),
      "pi_flow.harness": child.harness,
      "pi_flow.worker": child.worker,
      "pi_flow.fleet.workflow_id": child.workflowId,
      ...(model ? { "gen_ai.request.model": model } : {}),
    };
    const span: Span = loaded.tracer.startSpan(`worker ${child.role}`, { attributes }, parent ? loaded.remote(parent) : undefined);
    const trace = new RunTrace(span, loaded, model);
    running.add(trace);
    return {
      progress: (progress) => guarded(() => trace.progress(progress)),
      diagnostic: (entry) => guarded(() => trace.diagnostic(entry)),
      output: (text) => guarded(() => trace.output(text)),
      end: (result) =>
        guarded(() => {
          running.delete(trace);
          const error: Attributes = result.error ? { "pi_flow.error.code": result.error.code, "error.type": result.error.code } : {};
          trace.close({ ...usageAttributes(result.usage), ...error, "pi_flow.outcome": result.outcome }, result.outcome === "succeeded" ? undefined : (result.error?.code ?? result.outcome), result.value);
        }),
    };
  } catch (error) {
    reportTracingProblem(`a span could not start: ${error instanceof Error ? error.message : String(error)}`);
    return NOOP;
  }
}

/** The worker is stopping: the children it still runs go back to the queue, and their spans end with outcome `handed_back`. */
export function endHandedBack(): void {
  for (const trace of running) guarded(() => trace.close({ "pi_flow.outcome": "handed_back" }, undefined));
  running.clear();
}
