// Main-thread side of agent() and tools.*(): call limits, the concurrency queue, events, and
// turning host rejections into either a catchable script error or the end of the run.
import { parseJson, toJsonText } from "./json.ts";
import { limitMessage } from "./limits.ts";
import type { CallKind, HostFailure, ReplyMessage } from "./protocol.ts";
import type { AgentOptions, HostError, JsonValue, WorkflowError, WorkflowEvent, WorkflowHost, WorkflowLimits } from "./types.ts";

export interface BridgeHooks {
  emit(event: WorkflowEvent): void;
  reply(message: ReplyMessage): void;
  /** Ends the run; later host answers are ignored. */
  fatal(error: WorkflowError): void;
  closed(): boolean;
}

interface Call {
  id: number;
  kind: CallKind;
  name: string;
  text: string;
}

export class HostBridge {
  private readonly host: WorkflowHost;
  private readonly limits: WorkflowLimits;
  private readonly hooks: BridgeHooks;
  private readonly signal: AbortSignal;
  private agentCount = 0;
  private toolCount = 0;
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(host: WorkflowHost, limits: WorkflowLimits, hooks: BridgeHooks, signal: AbortSignal) {
    this.signal = signal;
    this.host = host;
    this.limits = limits;
    this.hooks = hooks;
  }

  handle(call: Call): void {
    if (call.kind === "agent") this.agent(call);
    else this.tool(call);
  }

  private agent(call: Call): void {
    const index = this.agentCount++;
    if (index >= this.limits.agentCalls) {
      return this.hooks.fatal({ kind: "limit", code: "agentCalls", message: limitMessage("agentCalls", this.limits) });
    }
    const options = parseJson(call.text) as AgentOptions;
    // Calls start in the order the script made them; extra calls wait for a free slot.
    this.queue.push(() => {
      this.active++;
      this.hooks.emit({ type: "agent_start", index, options });
      this.invoke(call.id, () => this.host.agent(options, { signal: this.signal, index }), (ok, value, error) => {
        const event: WorkflowEvent = { type: "agent_end", index, ok };
        const runId = ok ? (value as { runId?: unknown } | null)?.runId : error?.runId;
        if (typeof runId === "string") event.runId = runId;
        if (error?.code !== undefined) event.code = error.code;
        this.hooks.emit(event);
        this.active--;
        this.drain();
      });
    });
    this.drain();
  }

  private drain(): void {
    while (this.active < this.limits.concurrency && this.queue.length > 0 && !this.hooks.closed()) this.queue.shift()?.();
  }

  private tool(call: Call): void {
    const index = this.toolCount++;
    if (index >= this.limits.toolCalls) {
      return this.hooks.fatal({ kind: "limit", code: "toolCalls", message: limitMessage("toolCalls", this.limits) });
    }
    const fn = this.host.tools?.[call.name];
    if (typeof fn !== "function") {
      return this.hooks.reply({ type: "reply", id: call.id, ok: false, error: { name: "TypeError", message: `tools.${call.name} is not available` } });
    }
    const input = parseJson(call.text);
    this.hooks.emit({ type: "tool_start", index, name: call.name });
    this.invoke(call.id, () => fn(input, { signal: this.signal, index }), (ok, _value, error) => {
      const event: WorkflowEvent = { type: "tool_end", index, name: call.name, ok };
      if (error?.code !== undefined) event.code = error.code;
      this.hooks.emit(event);
    });
  }

  /** Runs one host call and answers the VM, unless the run ended meanwhile. */
  private invoke(
    id: number,
    run: () => Promise<unknown>,
    after: (ok: boolean, value: unknown, error: HostFailure | undefined) => void,
  ): void {
    let promise: Promise<unknown>;
    try {
      promise = Promise.resolve(run());
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (value) => {
        if (this.hooks.closed()) return;
        let text: string;
        try {
          text = value === undefined ? "null" : toJsonText(value, "the host's answer");
        } catch (error) {
          const failure: HostFailure = { name: "TypeError", message: (error as Error).message, code: "host_error" };
          after(false, undefined, failure);
          return this.hooks.reply({ type: "reply", id, ok: false, error: failure });
        }
        after(true, value as JsonValue, undefined);
        this.hooks.reply({ type: "reply", id, ok: true, text });
      },
      (reason: unknown) => {
        if (this.hooks.closed()) return;
        const failure = hostFailure(reason);
        after(false, undefined, failure);
        if ((reason as HostError | null)?.fatal === true) {
          const error: WorkflowError = { kind: "script", code: failure.code ?? "host_error", message: failure.message };
          if (failure.runId !== undefined) error.runId = failure.runId;
          return this.hooks.fatal(error);
        }
        this.hooks.reply({ type: "reply", id, ok: false, error: failure });
      },
    );
  }
}

/** What the script sees of a host rejection: message, `code` (default "host_error") and `runId`. */
export function hostFailure(reason: unknown): HostFailure {
  const error = reason as Partial<HostError> | null;
  const message = typeof error?.message === "string" ? error.message : String(reason);
  const failure: HostFailure = { name: "FlowError", message, code: typeof error?.code === "string" ? error.code : "host_error" };
  if (typeof error?.runId === "string") failure.runId = error.runId;
  return failure;
}
