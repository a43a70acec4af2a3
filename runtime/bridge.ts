// Main-thread side of agent() and tools.*(): call limits, the concurrency queues, events, and
// turning host rejections into either a catchable script error or the end of the run.
// Argument size (callArgsChars) is checked in the VM session, before anything crosses over.
import { decodeJson } from "./json.ts";
import { JsonAnswer } from "./json-answer.ts";
import { limitMessage } from "./limits.ts";
import type { CallKind, HostFailure, ReplyMessage } from "./protocol.ts";
import { CallQueue } from "./queue.ts";
import { ToolDiscovery } from "./tool-discovery.ts";
import { capText, MAX_ERROR_MESSAGE_CHARS, sanitizeIdentifier } from "./text.ts";
import type { AgentOptions, JsonValue, SharedCount, TreeBudget, WorkflowError, WorkflowEvent, WorkflowHost, WorkflowLimits } from "./types.ts";

export interface BridgeHooks {
  emit(event: WorkflowEvent): void;
  reply(message: ReplyMessage): void;
  /** Ends the run; later host answers are ignored. `at`: the frame of the script's call it refused. */
  fatal(error: WorkflowError, at?: string): void;
  closed(): boolean;
}

interface Call {
  id: number;
  kind: CallKind;
  name: string;
  text: string;
  at?: string;
}

/** How a started call ended, as its agent_end/tool_end event reports it. */
interface Ending {
  ok: boolean;
  code?: string;
  runId?: string;
}

/** The code of the end event of a call still running when the run ended. */
export const RUN_ENDED = "run_ended";

/**
 * What calls waiting for a concurrency slot may hold on the host, whatever hostBytes allows:
 * counted as hostBytes counts (2 bytes per character of JSON). A waiting call is kept as its JSON
 * text only, decoded when it starts, so this is close to what the queue really holds.
 */
export const QUEUED_BYTES_MAX = 16 * 1024 * 1024;
const BYTES_PER_CHAR = 2;

export class HostBridge {
  private readonly host: WorkflowHost;
  private readonly limits: WorkflowLimits;
  private readonly tree: TreeBudget | undefined;
  private readonly hooks: BridgeHooks;
  private readonly signal: AbortSignal;
  private agentCount = 0;
  private toolCount = 0;
  // agent() and tools.* calls queue separately, so a tool call (say, paging a child's final
  // answer) never waits behind children that may run for minutes.
  private readonly agents: CallQueue;
  private readonly tools: CallQueue;
  /**
   * describeTool()/searchTools() wait their turn too: no call limit counts them, and answered all
   * at once, thousands of searches (each answer the declarations of every tool) held the host's
   * thread for seconds and its heap for a gigabyte.
   */
  private readonly discoveries: CallQueue;
  /** Started calls without an end event yet, in start order: close() ends them. */
  private readonly started = new Map<string, (ending: Ending) => void>();
  private closing = false;
  private readonly discovery: ToolDiscovery;
  /** Characters of JSON of the calls pushed to a queue that have not started yet. */
  private queuedChars = 0;

  constructor(host: WorkflowHost, limits: WorkflowLimits, tree: TreeBudget | undefined, hooks: BridgeHooks, signal: AbortSignal) {
    this.signal = signal;
    this.host = host;
    this.limits = limits;
    this.tree = tree;
    this.hooks = hooks;
    const open = (): boolean => !this.closing && !hooks.closed();
    this.agents = new CallQueue(limits.concurrency, open);
    this.tools = new CallQueue(limits.concurrency, open);
    this.discoveries = new CallQueue(limits.concurrency, open);
    this.discovery = new ToolDiscovery(host);
  }

  handle(call: Call): void {
    if (call.kind === "agent") this.agent(call);
    else if (call.kind === "tool") this.tool(call);
    else this.discover(call);
  }

  /**
   * Emits the end event of every call still running, so a journal pairs each start with an end.
   * Call it before the run's result is delivered (events stop after that).
   */
  close(): void {
    // Ending a call frees its slot: nothing queued may start now.
    this.closing = true;
    for (const end of [...this.started.values()]) end({ ok: false, code: RUN_ENDED });
  }

  private agent(call: Call): void {
    const index = this.agentCount++;
    // The refused call never starts, so it gets no agent_start (and no agent_end).
    if (index >= this.limits.agentCalls) {
      return this.hooks.fatal({ kind: "limit", code: "agentCalls", message: limitMessage("agentCalls", this.limits) }, call.at);
    }
    if (this.refusedByTree("agentCalls", call)) return;
    if (this.refuseQueued(call, "agent() options")) return;
    this.enqueue(this.agents, call, (release) => {
      const options = this.decode(call, release) as AgentOptions | undefined;
      if (options === undefined) return;
      this.hooks.emit({ type: "agent_start", index, options });
      const end = this.track(`agent:${index}`, release, (ending) => {
        const event: WorkflowEvent = { type: "agent_end", index, ok: ending.ok };
        if (ending.runId !== undefined) event.runId = ending.runId;
        if (ending.code !== undefined) event.code = ending.code;
        this.hooks.emit(event);
      });
      this.invoke(call, "agent", () => this.host.agent(options, { signal: this.signal, index }), end);
    });
  }

  private tool(call: Call): void {
    const index = this.toolCount++;
    if (index >= this.limits.toolCalls) {
      return this.hooks.fatal({ kind: "limit", code: "toolCalls", message: limitMessage("toolCalls", this.limits) }, call.at);
    }
    if (this.refusedByTree("toolCalls", call)) return;
    const fn = this.host.tools?.[call.name];
    if (typeof fn !== "function") {
      return this.hooks.reply({ type: "reply", id: call.id, ok: false, error: { name: "TypeError", message: `tools.${call.name} is not available` } });
    }
    if (this.refuseQueued(call, `tools.${call.name}() arguments`)) return;
    this.enqueue(this.tools, call, (release) => {
      const input = this.decode(call, release);
      if (input === undefined) return;
      this.hooks.emit({ type: "tool_start", index, name: call.name });
      const end = this.track(`tool:${index}`, release, (ending) => {
        const event: WorkflowEvent = { type: "tool_end", index, name: call.name, ok: ending.ok };
        if (ending.code !== undefined) event.code = ending.code;
        this.hooks.emit(event);
      });
      this.invoke(call, "tool", () => fn(input, { signal: this.signal, index }), end);
    });
  }

  /** Ends the run when its tree has made its root's limit of such calls, as this run's own limit would. */
  private refusedByTree(name: SharedCount, call: Call): boolean {
    if (!this.tree || this.tree.take(name)) return false;
    this.hooks.fatal({ kind: "limit", code: name, message: this.tree.refusal(name) }, call.at);
    return true;
  }

  /**
   * Refuses a call that would have to wait behind others while they already hold the queue's
   * budget: a catchable RangeError with code hostBytes, as the VM's own hostBytes refusal. A call
   * into an empty queue is always taken, so any call within callArgsChars can run.
   */
  private refuseQueued(call: Call, what: string): boolean {
    const budget = Math.min(this.limits.hostBytes, QUEUED_BYTES_MAX);
    const bytes = (this.queuedChars + call.text.length) * BYTES_PER_CHAR;
    if (this.queuedChars === 0 || bytes <= budget) return false;
    const message = `${limitMessage("hostBytes", this.limits)}: ${what} would make calls waiting for a concurrency slot hold ${bytes} bytes (at most ${budget})`;
    this.hooks.reply({ type: "reply", id: call.id, ok: false, error: { name: "RangeError", message, code: "hostBytes", limit: "hostBytes" } });
    return true;
  }

  /** Queues a call as its JSON text; it counts against the queue's budget until it starts. */
  private enqueue(queue: CallQueue, call: Call, start: (release: () => void) => void): void {
    this.queuedChars += call.text.length;
    queue.push((release) => {
      this.queuedChars -= call.text.length;
      start(release);
    });
  }

  /** A starting call's arguments; undefined (and the run ended) when they cannot be decoded. */
  private decode(call: Call, release: () => void): JsonValue | undefined {
    try {
      return decodeJson(call.text, this.limits.valueDepth);
    } catch (error) {
      release();
      this.hooks.fatal({ kind: "sandbox", message: `the host could not read a call's arguments: ${capText(error instanceof Error ? error.message : String(error), MAX_ERROR_MESSAGE_CHARS)}` });
      return undefined;
    }
  }

  /** describeTool()/searchTools(): read-only and answered from declarations, so no limit or event applies; they queue as calls do. */
  private discover(call: Call): void {
    if (this.refuseQueued(call, `${call.name}() arguments`)) return;
    this.enqueue(this.discoveries, call, (release) => {
      const input = this.decode(call, release);
      if (input === undefined) return;
      this.invoke(call, "discover", () => this.discovery.answer(call.name, input), release);
    });
  }

  /** Registers a started call; the returned function emits its end event once and frees its slot. */
  private track(key: string, release: () => void, emitEnd: (ending: Ending) => void): (ending: Ending) => void {
    const end = (ending: Ending): void => {
      if (this.started.get(key) !== end) return;
      this.started.delete(key);
      emitEnd(ending);
      release();
    };
    this.started.set(key, end);
    return end;
  }

  /** Runs one host call and answers the VM, unless the run ended meanwhile. */
  private invoke({ id, at }: Call, kind: CallKind, run: () => Promise<unknown>, end: (ending: Ending) => void): void {
    let promise: Promise<unknown>;
    try {
      promise = Promise.resolve(run());
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (value) => {
        if (this.hooks.closed()) return;
        const runId = kind === "agent" ? readField(value, "runId") : undefined;
        const answer = this.answer(value, typeof runId === "string" ? runId : undefined);
        if (answer.ok) {
          end(typeof runId === "string" ? { ok: true, runId } : { ok: true });
          return this.hooks.reply({ type: "reply", id, ok: true, text: answer.text });
        }
        end(ending(answer.error));
        this.hooks.reply({ type: "reply", id, ok: false, error: answer.error });
      },
      (reason: unknown) => {
        if (this.hooks.closed()) return;
        const failure = hostFailure(reason);
        end(ending(failure));
        if (readField(reason, "fatal") === true) {
          const error: WorkflowError = { kind: "script", code: failure.code ?? "host_error", message: failure.message };
          if (failure.runId !== undefined) error.runId = failure.runId;
          return this.hooks.fatal(error, at);
        }
        this.hooks.reply({ type: "reply", id, ok: false, error: failure });
      },
    ).catch((error: unknown) => {
      // Handling an answer must never reject unobserved: that would end the host process.
      const message = capText(error instanceof Error ? error.message : String(error), MAX_ERROR_MESSAGE_CHARS);
      this.hooks.fatal({ kind: "sandbox", message: `the host could not hand an answer to the sandbox: ${message}` });
    });
  }

  /** The host's answer as JSON text for the VM, or why the script cannot have it. */
  private answer(value: unknown, runId: string | undefined): { ok: true; text: string } | { ok: false; error: HostFailure } {
    let text: string | undefined;
    let chars: number;
    let depth: number;
    try {
      // An answer the host serialised already (a journaled tools.* answer) is not serialised again.
      const answer = value instanceof JsonAnswer ? value : JsonAnswer.of(value);
      ({ text, chars, depth } = answer);
    } catch (error) {
      return { ok: false, error: { name: "TypeError", message: (error as Error).message, code: "host_error" } };
    }
    const refuse = (limit: "replyChars" | "valueDepth", detail: string): { ok: false; error: HostFailure } => {
      const error: HostFailure = { name: "RangeError", message: `${limitMessage(limit, this.limits)}: ${detail}`, code: limit, limit };
      if (runId !== undefined) error.runId = runId;
      return { ok: false, error };
    };
    // A reply is parsed inside the VM: past this size it would only exhaust the VM's memory.
    // Length is checked first: a resume knows only the length of an answer too large to keep.
    if (chars > this.limits.replyChars) return refuse("replyChars", `the answer has ${chars} characters of JSON`);
    // The script's own values are held to valueDepth on their way out; answers on their way in.
    if (depth > this.limits.valueDepth) return refuse("valueDepth", `the answer nests deeper than ${this.limits.valueDepth} levels`);
    if (text === undefined) return { ok: false, error: { name: "TypeError", message: "the host's answer has no JSON to hand over", code: "host_error" } };
    return { ok: true, text };
  }
}

function ending(failure: HostFailure): Ending {
  const result: Ending = { ok: false };
  if (failure.code !== undefined) result.code = failure.code;
  if (failure.runId !== undefined) result.runId = failure.runId;
  return result;
}

/**
 * What the script sees of a host rejection: message, `code` (default "host_error") and `runId`,
 * bounded like the script's own errors, since the script may rethrow them.
 */
export function hostFailure(reason: unknown): HostFailure {
  const text = readField(reason, "message");
  const message = capText(typeof text === "string" ? text : shown(reason), MAX_ERROR_MESSAGE_CHARS);
  const code = readField(reason, "code");
  const failure: HostFailure = { name: "FlowError", message, code: (typeof code === "string" ? sanitizeIdentifier(code) : undefined) ?? "host_error" };
  const runId = readField(reason, "runId");
  if (typeof runId === "string") failure.runId = runId;
  return failure;
}

/**
 * A field of a value a host callback handed over, or undefined: a tool may reject with anything,
 * and a getter or proxy trap that throws must not end the run as a sandbox failure.
 */
function readField(value: unknown, key: string): unknown {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** A rejection reason as text; one without a string form (a null-prototype object) is named as such. */
function shown(reason: unknown): string {
  try {
    return String(reason);
  } catch {
    return "the host failed with a value that has no text";
  }
}
