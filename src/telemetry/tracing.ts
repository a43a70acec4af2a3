import type { Context, Span, SpanContext } from "@opentelemetry/api";
import { createRequire } from "node:module";
import type { RunView } from "../contract/run-schema.ts";
import { printable, shownUrl, type TaskIdentity } from "../runs/index.ts";
import { modelName, spanText, startAttributes } from "./attributes.ts";
import { contentWanted, tracesEndpoint, tracingConfig } from "./config.ts";
import { loadTracing, type LoadedTracing } from "./provider.ts";
import { RunTrace, type RunTraceHooks, type TraceTools } from "./run-trace.ts";
import { processGlobal } from "../../runtime/process-global.ts";

/**
 * The process's tracing: off (every hook a no-op) unless OTEL_TRACES_EXPORTER=otlp. Then the SDK
 * starts loading when this module is first imported, so it is ready long before a session's first
 * tool call; `flow run` awaits `telemetryReady()` before it starts its run. One trace per
 * top-level run: a run with a parent in this process is a span under its parent's span.
 *
 * Lifecycle of one run's trace: `traceRun` at creation (the run's span starts) → hooks while it
 * runs (turns, tool calls, first output) → `end` at settle. The owner of the run calls both.
 */
interface TracingState {
  loaded?: LoadedTools;
  ready: Promise<void>;
  /** Open runs' spans, so a child can start under its parent. */
  open: Map<string, Span>;
  /** The first MAX_PROBLEMS distinct problems, each said once. */
  problems: string[];
  /** Problems reported past those: counted, not kept, so a stream of ever-new messages holds nothing. */
  unlisted: number;
  onProblem?: (message: string) => void;
}

/** How many distinct problems are kept and said; the rest are a count. */
const MAX_PROBLEMS = 20;

/** The loaded tracer, with what a span started in another process needs: its parent's context. */
export type LoadedTools = TraceTools & { flush(): Promise<void>; remote(parent: SpanContext): Context };

const NOOP: RunTraceHooks = { progress() {}, diagnostic() {}, output() {}, toolCall() {}, end() {}, unsettled() {} };

const version = (): string => {
  try {
    return (createRequire(import.meta.url)("../../package.json") as { version: string }).version;
  } catch {
    return "unknown";
  }
};

/**
 * A problem as pi-flow says it, on stderr and on `/flow doctor`'s line: one line of plain text,
 * redacted and at most 500 characters. Its words are often a collector's (an HTTP status text, an
 * error from the far end), which may carry terminal escapes, line breaks or a secret.
 */
function problemText(message: string): string {
  const line = printable(message).replace(/\s+/g, " ").trim();
  return line.length <= 500 ? line : `${line.slice(0, 500)}…`;
}

function report(state: TracingState, raw: string): void {
  const message = problemText(raw);
  if (state.problems.includes(message)) return; // said once per kind of failure
  if (state.problems.length >= MAX_PROBLEMS) {
    state.unlisted++;
    if (state.unlisted === 1) tell(state, `more telemetry problems followed; only the first ${MAX_PROBLEMS} are listed`);
    return;
  }
  state.problems.push(message);
  tell(state, message);
}

function tell(state: TracingState, message: string): void {
  try {
    state.onProblem?.(message);
  } catch {
    // A listener's failure is not the run's.
  }
}

/** The problems as said: the first ones, then how many more there were. */
function listedProblems(): string[] {
  return state.unlisted === 0 ? [...state.problems] : [...state.problems, `${state.unlisted} more telemetry problem${state.unlisted === 1 ? " was" : "s were"} reported and not listed`];
}

function start(): TracingState {
  const state: TracingState = { ready: Promise.resolve(), open: new Map(), problems: [], unlisted: 0 };
  const config = tracingConfig(process.env);
  if ("problem" in config) report(state, config.problem);
  if (!config.on) return state;
  state.ready = (async () => {
    try {
      const [api, loaded]: [typeof import("@opentelemetry/api"), LoadedTracing] = await Promise.all([
        import("@opentelemetry/api"),
        loadTracing(config.protocol, version(), (message) => report(state, message)),
      ]);
      state.loaded = {
        ...loaded,
        under: (parent) => api.trace.setSpan(api.context.active(), parent),
        remote: (parent) => api.trace.setSpanContext(api.context.active(), { ...parent, isRemote: true }),
        content: contentWanted(undefined, process.env),
      };
    } catch (error) {
      report(state, `tracing could not start: ${error instanceof Error ? error.message : String(error)}`);
    }
  })();
  return state;
}

/**
 * One state per process (runtime/process-global.ts): the `flow` command and the extension Pi loads may be
 * two instances of this module, and a reloaded extension a third; they share one provider.
 */
const state: TracingState = processGlobal("pi-flow.telemetry", start);

/** Resolves once tracing is loaded (or known to be off); never rejects. */
export const telemetryReady = (): Promise<void> => state.ready;

/** Sends every ended span; a run's end is not held up by it. Never rejects. */
export async function flushTelemetry(): Promise<void> {
  await state.ready;
  await state.loaded?.flush().catch((error: unknown) => {
    // A failed export was said by the exporter already; a flush that fails some other way is said here.
    if (state.problems.length === 0) report(state, `spans could not be flushed: ${error instanceof Error ? error.message : String(error)}`);
  });
}

/**
 * Export problems so far (a dead collector, an unsupported protocol), each said once, the first
 * MAX_PROBLEMS of them and then how many more; and a listener for the next ones.
 */
export function telemetryProblems(listener?: (message: string) => void): readonly string[] {
  if (listener) state.onProblem = listener;
  return listedProblems();
}

/** One line for `/flow doctor`: whether spans are exported, where to, and what went wrong so far. */
export function telemetryStatus(): string {
  const config = tracingConfig(process.env);
  const listed = listedProblems();
  const problems = listed.length === 0 ? "" : `; ${listed.join("; ")}`;
  if (!config.on) return `off (OTEL_TRACES_EXPORTER=otlp and OTEL_EXPORTER_OTLP_ENDPOINT turn it on, see docs/observability.md)${problems}`;
  return `OTLP ${config.protocol} to ${shownUrl(tracesEndpoint(process.env))}${state.loaded ? "" : " (loading)"}${problems}`;
}

/** The variables that hold the collector's credentials (an API key, a bearer token): the exporter reads them once, as it is made. */
const HEADER_VARIABLES = ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"] as const;

/**
 * Takes the collector's headers out of the process's environment once the exporter holds them, for
 * a process whose every shell is a child's (`flow run`, `flow worker`): a pi child's bash inherits
 * the environment, and with the key could send the collector anything, or the key anywhere. A Pi
 * session keeps them: its own bash is the user's, with the user's environment. `withheld` says
 * which to take out.
 */
export function withholdCollectorHeaders(withheld: (name: string) => boolean = () => true): void {
  if (!state.loaded) return;
  for (const name of HEADER_VARIABLES) if (withheld(name)) delete process.env[name];
}

/** `flow.telemetry.content` from Pi's settings: prompts and answers go on spans only when it is true. */
export function setTelemetryContent(setting: unknown): void {
  if (state.loaded) state.loaded.content = contentWanted(setting, process.env);
}

export interface TracedRun {
  runId: string;
  kind: "agent" | "workflow";
  task: TaskIdentity;
  /** The run's stored correlation ID, so its spans and its record agree. */
  correlationId: string;
  model?: string;
  prompt?: string;
}

/** What a span takes from the run as created: its ID, task and stored correlation ID. */
export const traced = (view: RunView): Pick<TracedRun, "runId" | "task" | "correlationId"> => ({
  runId: view.runId,
  task: view.task,
  correlationId: view.correlationId ?? view.runId,
});

/**
 * Starts the run's span; the hooks it returns end it. A no-op while tracing is off: `describe` is
 * called only when tracing is on, so a run pays nothing for facts no span will carry.
 */
export function traceRun(describe: () => TracedRun): RunTraceHooks {
  const loaded = state.loaded;
  if (!loaded) return NOOP;
  try {
    const run = describe();
    const parent = run.task.parentRunId === undefined ? undefined : state.open.get(run.task.parentRunId);
    const { correlationId } = run;
    const name = run.kind === "workflow" ? `workflow ${run.task.workflow ?? "inline"}` : `invoke_agent ${run.task.role ?? run.task.subagentType ?? "agent"}`;
    const model = modelName(run.model);
    const attributes = startAttributes(run.runId, run.kind, run.task, correlationId, model);
    if (loaded.content && run.prompt !== undefined) attributes["pi_flow.prompt"] = spanText(run.prompt);
    const span = loaded.tracer.startSpan(name, { attributes }, parent ? loaded.under(parent) : undefined);
    state.open.set(run.runId, span);
    const trace = new RunTrace(span, loaded, model);
    return {
      progress: (progress) => guarded(() => trace.progress(progress)),
      diagnostic: (entry) => guarded(() => trace.diagnostic(entry)),
      output: (text) => guarded(() => trace.output(text)),
      toolCall: (event) => guarded(() => trace.toolCall(event)),
      end: (view, answer) =>
        guarded(() => {
          state.open.delete(run.runId);
          trace.end(view, answer);
        }),
      unsettled: (error) =>
        guarded(() => {
          state.open.delete(run.runId);
          trace.unsettled(error);
        }),
    };
  } catch (error) {
    report(state, `a span could not start: ${error instanceof Error ? error.message : String(error)}`);
    return NOOP;
  }
}

/** The loaded tracer, or undefined while tracing is off (or not loaded yet): for spans of runs this process does not own (a worker's). */
export const loadedTracing = (): LoadedTools | undefined => state.loaded;

/** Reports a tracing problem as every other one is: once, on `/flow doctor` and `flow`'s stderr. */
export const reportTracingProblem = (message: string): void => report(state, message);

/** The open span of a run this process traces, for a process that runs part of it (a `flow worker`). */
export const openRunSpan = (runId: string): Span | undefined => state.open.get(runId);

/** Tracing never fails a run: a throw inside the SDK is reported, and the run goes on. */
export function guarded(action: () => void): void {
  try {
    action();
  } catch (error) {
    report(state, `a span could not be recorded: ${error instanceof Error ? error.message : String(error)}`);
  }
}
