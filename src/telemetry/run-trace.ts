import type { Context, Span, Tracer } from "@opentelemetry/api";
import type { RunView } from "../contract/run-schema.ts";
import type { ChildDiagnostic, ChildProgress, ChildUsage } from "../harnesses/index.ts";
import { endAttributes, spanText, type Attributes } from "./attributes.ts";

/** What the trace of one run hears while it runs; every method is safe to call in any state. */
export interface RunTraceHooks {
  /** A child harness's progress: a new turn starts at "thinking", ends when usage counts it. */
  progress(progress: ChildProgress): void;
  /** Tool calls and their results, as the harness reports them. */
  diagnostic(entry: ChildDiagnostic): void;
  /** Assistant text: its first piece marks the time to first token. */
  output(text: string): void;
  /** A workflow's tools.* call started or ended (`index` is the call's journal index). */
  toolCall(event: { index: number; tool: string; ended: boolean; ok?: boolean; code?: string }): void;
  /** The run settled: its span ends with outcome, usage and cost. `answer` only with content on. */
  end(view: RunView, answer?: unknown): void;
  /**
   * The run's settle threw before `end`: its span ends anyway, ERROR, with why, so the trace still
   * holds the run (and its open turns and tool calls) instead of leaking a span that never ends.
   */
  unsettled(error: unknown): void;
}

/** OpenTelemetry's span status codes (api's SpanStatusCode, said here so the API stays a type import). */
const STATUS_ERROR = 2;

export interface TraceTools {
  tracer: Tracer;
  under(parent: Span): Context;
  content: boolean;
}

/** A tool's name as a span carries it: redacted like every span text, and short, since it names the span. */
const toolName = (name: string): string => spanText(name, 100);

/**
 * The most tool calls whose spans wait for a result at once. A CLI child may name calls without
 * end and answer none (its reader forgets ids past as many): past this the oldest span ends,
 * ERROR, so the host does not hold a span for every call a long run ever made.
 */
export const MAX_WAITING_TOOL_SPANS = 4096;

/** Where a tool call waits for its result: under its id when it has one, so overlapping calls of one tool keep their own results. */
const waitingKey = (entry: { tool: string; id?: string }): string => (entry.id ? `id:${entry.id}` : `tool:${entry.tool}`);

/** The spans of one run: the run's own, and under it its turns and tool calls (or a workflow's tools.* calls). */
export class RunTrace implements RunTraceHooks {
  private turn: { span: Span; usage: ChildUsage } | undefined;
  private lastUsage: ChildUsage | undefined;
  /** Tool calls waiting for their result, by call id where the harness gave one, else by tool name (first in, first out). */
  private readonly tools = new Map<string, Span[]>();
  private waitingTools = 0;
  /** Each waiting span's place in the order calls came in, to find the oldest. */
  private readonly started = new WeakMap<Span, number>();
  private callsSeen = 0;
  private readonly workflowTools = new Map<number, Span>();
  private firstOutputSeen = false;
  private compactions = 0;
  private ended = false;
  private readonly startedAt = Date.now();
  readonly span: Span;
  private readonly using: TraceTools;
  private readonly model: string | undefined;

  constructor(span: Span, using: TraceTools, model: string | undefined) {
    this.span = span;
    this.using = using;
    this.model = model;
  }

  private child(name: string, attributes: Record<string, string | number | boolean>): Span {
    return this.using.tracer.startSpan(name, { attributes }, this.using.under(this.span));
  }

  progress(progress: ChildProgress): void {
    if (this.ended) return;
    // The child's final event (a CLI's result or completed turn): a tool call still open then never gets its result.
    if (progress.activity === "finished") this.endUnanswered("no result came before the child's final event");
    if (progress.activity === "compacting") {
      this.compactions++;
      this.span.addEvent("compaction", { "pi_flow.compactions": this.compactions });
    }
    const previous = this.lastUsage;
    this.lastUsage = progress.usage;
    if (this.turn && progress.usage.turns > this.turn.usage.turns) this.endTurn(progress.usage);
    if (progress.activity === "thinking" && !this.turn) {
      const number = progress.usage.turns + 1;
      const attributes = { "gen_ai.operation.name": "chat", "pi_flow.turn": number, ...(this.model ? { "gen_ai.request.model": this.model } : {}) };
      this.turn = { span: this.child(`chat ${this.model ?? ""}`.trim(), attributes), usage: previous ?? progress.usage };
    }
  }

  private endTurn(now: ChildUsage): void {
    const turn = this.turn!;
    this.turn = undefined;
    const delta = (key: "inputTokens" | "outputTokens") => now[key] - turn.usage[key];
    turn.span.setAttributes({ "gen_ai.usage.input_tokens": delta("inputTokens"), "gen_ai.usage.output_tokens": delta("outputTokens") });
    turn.span.end();
  }

  diagnostic(entry: ChildDiagnostic): void {
    if (this.ended) return;
    if (entry.type === "tool_call") {
      // The model chose the name: it is text like any other the run did not write, redacted before it names a span.
      const tool = toolName(entry.tool);
      const attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        ...(entry.id ? { "gen_ai.tool.call.id": spanText(entry.id, 256) } : {}),
        ...(this.using.content ? { "pi_flow.tool.arguments": spanText(entry.args) } : {}),
      };
      const parent = this.turn?.span ?? this.span;
      const span = this.using.tracer.startSpan(`execute_tool ${tool}`, { attributes }, this.using.under(parent));
      const key = waitingKey(entry);
      // Appended in place: spans of one key (a tool without ids) may be thousands.
      this.started.set(span, this.callsSeen++);
      const waiting = this.tools.get(key);
      if (waiting) waiting.push(span);
      else this.tools.set(key, [span]);
      if (++this.waitingTools > MAX_WAITING_TOOL_SPANS) this.endOldestWaiting();
    } else if (entry.type === "tool_result") {
      // A result whose id names no waiting call (its call was never reported) ends no other call's span.
      const key = waitingKey(entry);
      const open = this.tools.get(key);
      const span = open?.shift();
      if (open?.length === 0) this.tools.delete(key);
      if (!span) return;
      this.waitingTools--;
      if (entry.isError) span.setStatus({ code: STATUS_ERROR, message: "the tool reported an error" });
      span.end();
    } else if (entry.type === "error") {
      this.span.addEvent("error", { message: spanText(entry.message, 1000) });
    }
  }

  /**
   * Ends every tool call still waiting for its result, ERROR with why: a CLI reports calls whose
   * result its stream never shows (a server tool, a call cut off), and such a span would otherwise
   * stay open, timing nothing, until the child's process is gone.
   */
  /** Ends the span that has waited longest (spans start in order: the earliest first span of any key). */
  private endOldestWaiting(): void {
    let oldest: { key: string; at: number } | undefined;
    for (const [key, spans] of this.tools) {
      const at = this.started.get(spans[0]!) ?? 0;
      if (!oldest || at < oldest.at) oldest = { key, at };
    }
    if (!oldest) return;
    const spans = this.tools.get(oldest.key)!;
    const span = spans.shift()!;
    if (spans.length === 0) this.tools.delete(oldest.key);
    this.waitingTools--;
    span.setStatus({ code: STATUS_ERROR, message: `more than ${MAX_WAITING_TOOL_SPANS} tool calls were waiting for their results` });
    span.end();
  }

  private endUnanswered(why: string): void {
    for (const spans of this.tools.values()) {
      for (const span of spans) {
        span.setStatus({ code: STATUS_ERROR, message: why });
        span.end();
      }
    }
    this.tools.clear();
    this.waitingTools = 0;
  }

  output(text: string): void {
    if (this.ended || this.firstOutputSeen || text.length === 0) return;
    this.firstOutputSeen = true;
    this.span.setAttribute("pi_flow.time_to_first_token_ms", Date.now() - this.startedAt);
  }

  toolCall(event: { index: number; tool: string; ended: boolean; ok?: boolean; code?: string }): void {
    if (this.ended) return;
    if (!event.ended) {
      const tool = toolName(event.tool);
      const attributes = { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool, "pi_flow.call_index": event.index };
      this.workflowTools.set(event.index, this.child(`tools.${tool}`, attributes));
      return;
    }
    const span = this.workflowTools.get(event.index);
    if (!span) return;
    this.workflowTools.delete(event.index);
    // The tool chose the code (the sandbox only keeps it to 64 identifier characters, which a token fits): redacted like any text it wrote.
    const code = event.code ? spanText(event.code, 100) : undefined;
    if (event.ok === false) span.setStatus({ code: STATUS_ERROR, message: code ?? "failed" });
    if (code) span.setAttribute("pi_flow.error.code", code);
    span.end();
  }

  end(view: RunView, answer?: unknown): void {
    const failure = view.state.outcome === "succeeded" ? undefined : (view.state.error?.code ?? view.state.outcome ?? "unfinished");
    this.close(endAttributes(view), failure, answer);
  }

  /** Settling the run threw: the span ends as failed, the error's (redacted) words as an event. */
  unsettled(error: unknown): void {
    if (this.ended) return;
    const message = error instanceof Error ? error.message : String(error);
    this.span.addEvent("error", { message: spanText(`the run could not settle: ${message}`, 1000) });
    this.close({ "pi_flow.outcome": "failed", "pi_flow.error.code": "failed", "error.type": "failed" }, "failed");
  }

  /** Ends the run's span and whatever is still open under it; `failure` (an error code) marks it ERROR. */
  close(attributes: Attributes, failure: string | undefined, answer?: unknown): void {
    if (this.ended) return;
    if (this.turn && this.lastUsage) this.endTurn(this.lastUsage);
    this.turn?.span.end();
    this.endUnanswered("no result came before the run ended");
    for (const span of this.workflowTools.values()) span.end();
    this.ended = true;
    this.span.setAttributes({ ...attributes, "pi_flow.compactions": this.compactions });
    if (this.using.content && answer !== undefined) {
      this.span.setAttribute("pi_flow.answer", spanText(typeof answer === "string" ? answer : JSON.stringify(answer) ?? ""));
    }
    if (failure !== undefined) this.span.setStatus({ code: STATUS_ERROR, message: failure });
    this.span.end();
  }
}
