// runWorkflow: one run from start to result. The promise never rejects for anything the script
// or the host does; every ending is a WorkflowResult.
import { basename } from "node:path";
import { HostBridge } from "./bridge.ts";
import { freshSeed, seedState } from "./determinism.ts";
import { mapStack } from "./errors.ts";
import { decodeJson, jsonDepth, toJsonText } from "./json.ts";
import { LimitsError, limitMessage, resolveLimits, wasmMemoryCap } from "./limits.ts";
import { acquireWorker, releaseWorker, type PooledWorker } from "./pool.ts";
import { isWorkerToMain, SHARED_SPENT, SHARED_STOP, SHARED_TURN, SHARED_TURN_AT, SHARED_WORDS, type MainToWorker, type ReplyMessage, type RunConfig, type VmFailure, type VmOutcome, type WorkerToMain } from "./protocol.ts";
import { capText, MAX_ERROR_MESSAGE_CHARS } from "./text.ts";
import type {
  ParsedWorkflow,
  RunWorkflowOptions,
  StoreWrites,
  WorkflowError,
  WorkflowEvent,
  WorkflowLimits,
  WorkflowResult,
} from "./types.ts";

/**
 * How far past cpuMs the main thread's watchdog lets a run go before it stops it: QuickJS's own
 * check ends an ordinary spin at cpuMs, so the watchdog only meets a single call that never
 * returns to it.
 */
const CPU_WATCHDOG_GRACE_MS = 1000;

/** How long a stopped run's worker has to send what it still holds and answer (see stop). */
const STOP_DRAIN_MS = 250;

/**
 * How long a turn the watchdog sees for the first time has been running. It started after the
 * watchdog's last look, so no longer than that, and the wall clock the worker stated its start by
 * can step either way: a step forward is cut to the last look, a step back reads as just started
 * (the turn is then timed from here on this thread's monotonic clock).
 */
export function believedRunning(times: { sinceLastLook: number; byWallClock: number }): number {
  return Math.max(0, Math.min(times.sinceLastLook, times.byWallClock));
}

export async function runWorkflow(workflow: ParsedWorkflow, options: RunWorkflowOptions): Promise<WorkflowResult> {
  const replay = { seed: options.seed === undefined ? freshSeed() : String(options.seed), startedAt: options.startedAt ?? Date.now() };
  const early = (error: WorkflowError): WorkflowResult => ({ ok: false, error, output: "", replay });

  let limits: WorkflowLimits;
  try {
    limits = resolveLimits({ ...workflow.meta.limits, ...options.limits });
  } catch (error) {
    if (error instanceof LimitsError) return early({ kind: "limit", code: error.limit, message: error.message });
    throw error;
  }
  // The root's limits bound its tree from here on; a nested run is bounded by them as well.
  if (options.tree && !options.tree.nested) options.tree.budget.setRoot(limits);
  if (options.signal?.aborted) return early({ kind: "aborted", code: "aborted", message: "the workflow run was aborted" });

  let config: RunConfig;
  try {
    const argsText = toJsonText(options.args ?? {}, "args");
    const store = Object.entries(options.store ?? {}).map(([key, value]): [string, string] => [key, toJsonText(value, `store value "${key}"`)]);
    // Read inside the VM by a parse that recurses: past valueDepth they are refused as the caller's mistake, not the script's limit.
    const inputs: Array<[what: string, text: string]> = [["args", argsText], ...store.map(([key, text]): [string, string] => [`store value "${key}"`, text])];
    for (const [what, text] of inputs) {
      if (jsonDepth(text, limits.valueDepth) > limits.valueDepth) throw new TypeError(`${what} nests deeper than ${limits.valueDepth} levels (valueDepth)`);
    }
    config = { argsText, toolNames: Object.keys(options.host.tools ?? {}), startedAt: replay.startedAt, seedState: seedState(replay.seed), store };
  } catch (error) {
    return early({ kind: "script", code: "args_invalid", message: (error as Error).message });
  }

  return new RunSession(workflow, options, limits, config, replay).start();
}

class RunSession {
  private readonly workflow: ParsedWorkflow;
  private readonly options: RunWorkflowOptions;
  private readonly limits: WorkflowLimits;
  private readonly config: RunConfig;
  private readonly replay: WorkflowResult["replay"];
  private readonly filename: string;
  /** The words the run shares with its worker (protocol.ts): the stop flag, the CPU the VM spent. */
  private readonly shared = new Int32Array(new SharedArrayBuffer(SHARED_WORDS * Int32Array.BYTES_PER_ELEMENT));
  /** Epoch ms the worker states its turns' starts from. */
  private clockOrigin = 0;
  /** The running turn the watchdog last saw and when it started, on this thread's performance.now(). */
  private seenTurn: { turn: number; startedAt: number } | undefined;
  /** When the watchdog last looked (performance.now()): a turn it had not seen started after. */
  private lastLook = 0;
  /** Stops a run whose one native call runs past cpuMs: see checkCpu. */
  private watchdog: NodeJS.Timeout | undefined;
  // Keys come from the script: a null-prototype record keeps "__proto__" an ordinary key.
  private readonly storeWrites: StoreWrites = { set: Object.create(null) as StoreWrites["set"], delete: [] };
  private output = "";
  private settled = false;
  private resolve: (result: WorkflowResult) => void = () => {};
  private pooled: PooledWorker | undefined;
  /** Gives a nested run's share of its tree's heap back: set once the share is granted. */
  private releaseHeap: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Set while a stopped run's worker sends what it still holds (see stop): why the run was stopped. */
  private stopping: WorkflowError | undefined;
  private stopDrain: NodeJS.Timeout | undefined;
  private readonly onAbort = () => this.stop({ kind: "aborted", code: "aborted", message: "the workflow run was aborted" });
  private readonly onMessage = (message: unknown) => this.receive(message);
  private readonly onError = (error: Error) => this.crash(`the sandbox worker failed: ${error.message}`);
  private readonly onExit = (code: number) => this.crash(`the sandbox worker exited (code ${code})`);
  private bridge: HostBridge;
  private replies: ReplyMessage[] = [];
  /** Aborts when the run ends: host calls still in flight can stop. */
  private readonly ended = new AbortController();

  constructor(workflow: ParsedWorkflow, options: RunWorkflowOptions, limits: WorkflowLimits, config: RunConfig, replay: WorkflowResult["replay"]) {
    this.workflow = workflow;
    this.options = options;
    this.limits = limits;
    this.config = config;
    this.replay = replay;
    // Stack frames are matched by this name, so keep it free of spaces and parentheses.
    this.filename = (workflow.path ? basename(workflow.path) : workflow.origin === "inline" ? "inline.js" : "workflow.js").replace(/[\s()]/g, "_");
    this.bridge = new HostBridge(options.host, limits, options.tree?.budget, {
      emit: (event) => this.emit(event),
      reply: (message) => this.queueReply(message),
      fatal: (error) => this.stop(error),
      // A stopping run is over for its calls: no answer reaches the VM, no queued call starts.
      closed: () => this.settled || this.stopping !== undefined,
    }, this.ended.signal);
  }

  start(): Promise<WorkflowResult> {
    const result = new Promise<WorkflowResult>((resolve) => {
      this.resolve = resolve;
    });
    this.timer = setTimeout(() => this.stop({ kind: "timeout", code: "timeoutMs", message: limitMessage("timeoutMs", this.limits) }), this.limits.timeoutMs);
    this.options.signal?.addEventListener("abort", this.onAbort, { once: true });
    const tree = this.options.tree;
    if (!tree?.nested) this.startWorker();
    else {
      // A nested run first waits for its share of its tree's heap (run-tree.ts).
      const bytes = wasmMemoryCap(this.limits.memoryBytes);
      tree.budget.reserveHeap(bytes, this.ended.signal, () => this.emit({ type: "heap_wait", bytes })).then(
        (release) => {
          if (this.settled) return release();
          this.releaseHeap = release;
          this.startWorker();
        },
        () => {
          // Stopped while it waited: the run has finished already.
        },
      );
    }
    return result;
  }

  private startWorker(): void {
    acquireWorker(this.limits.memoryBytes).then(
      (pooled) => {
        if (this.settled) return releaseWorker(pooled, true);
        this.pooled = pooled;
        pooled.worker.on("message", this.onMessage).on("error", this.onError).on("exit", this.onExit);
        this.clockOrigin = Date.now();
        this.lastLook = performance.now();
        pooled.worker.postMessage({
          type: "run",
          filename: this.filename,
          body: this.workflow.body,
          limits: this.limits,
          config: this.config,
          shared: this.shared.buffer as SharedArrayBuffer,
          clockOrigin: this.clockOrigin,
        });
        this.watchCpu(this.limits.cpuMs + CPU_WATCHDOG_GRACE_MS);
      },
      (error: Error) => this.finish(this.failure({ kind: "sandbox", message: `the sandbox could not start: ${error.message}` })),
    ).catch((error: unknown) => this.crash(`the sandbox could not start: ${error instanceof Error ? error.message : String(error)}`));
  }

  /**
   * One message from the run's worker. Nothing in it may reach the host's event loop as an
   * exception: a malformed message, or any failure while handling one, ends this run only.
   */
  private receive(message: unknown): void {
    if (this.settled) return;
    if (!isWorkerToMain(message)) return this.crash("the sandbox sent a malformed message");
    try {
      this.handle(message);
    } catch (error) {
      this.crash(`the host could not handle a message from the sandbox: ${capText(error instanceof Error ? error.message : String(error), MAX_ERROR_MESSAGE_CHARS)}`);
    }
  }

  /**
   * Replies wait for the end of this turn of the host's event loop and leave together: children that
   * settle in one turn cost the worker one message and one run of the VM's jobs, not one each.
   */
  private queueReply(message: ReplyMessage): void {
    this.replies.push(message);
    if (this.replies.length === 1) setImmediate(this.sendReplies);
  }

  private readonly sendReplies = (): void => {
    const replies = this.replies;
    this.replies = [];
    // A run that ended meanwhile has let its worker go (perhaps to another run): nothing more reaches it.
    if (this.settled || replies.length === 0) return;
    this.pooled?.worker.postMessage(replies.length === 1 ? replies[0] : { type: "replies", replies });
  };

  private handle(message: WorkerToMain): void {
    // A stopping run takes the output and store writes its worker sent before it stopped; no new call starts.
    if (this.stopping && message.type !== "output" && message.type !== "store") {
      if (message.type === "stopped") this.stopped(this.stopping);
      return;
    }
    switch (message.type) {
      case "call":
        return this.bridge.handle(message);
      case "calls":
        for (const call of message.calls) {
          if (this.settled) return;
          this.bridge.handle(call);
        }
        return;
      case "output":
        this.output += message.text;
        return this.emit({ type: "output", text: message.text });
      case "store":
        return this.recordStore(message.key, message.text);
      case "done":
        return this.done(message.outcome, message.reusable);
      default:
        return;
    }
  }

  private recordStore(key: string, text: string | undefined): void {
    const { set, delete: deleted } = this.storeWrites;
    const at = deleted.indexOf(key);
    if (at >= 0) deleted.splice(at, 1);
    if (text === undefined) {
      delete set[key];
      deleted.push(key);
      return this.emit({ type: "store", key, value: undefined });
    }
    const value = decodeJson(text, this.limits.valueDepth);
    set[key] = value;
    this.emit({ type: "store", key, value: decodeJson(text, this.limits.valueDepth) });
  }

  private done(outcome: VmOutcome, reusable: boolean): void {
    const pooled = this.detach();
    if (pooled) releaseWorker(pooled, reusable && (outcome.ok || outcome.error.kind === "script"));
    if (outcome.ok) {
      const value = outcome.text === undefined ? undefined : decodeJson(outcome.text, this.limits.valueDepth);
      return this.finish({ ok: true, value, output: this.output, storeWrites: this.storeWrites, replay: this.replay });
    }
    this.finish(this.failure(this.mapFailure(outcome.error)));
  }

  // The delay is at most cpuMs (ceiling 1 h) and the grace: well inside what Node's timers take.
  private watchCpu(delayMs: number): void {
    this.watchdog = setTimeout(() => this.checkCpu(), delayMs);
  }

  /**
   * QuickJS asks for cpuMs between its operations, so one native call that runs long (an indexOf
   * of megabytes in megabytes) is past its reach: this watchdog, on the main thread, reads what
   * the worker publishes and stops such a run once its CPU is past cpuMs by the grace. A running
   * turn is timed on this thread's monotonic clock from the start the worker states, believed only
   * between the last look and now (a wall clock that steps moves it no further), and looked at
   * again within the grace; otherwise the watchdog looks again when the rest of the budget could be
   * spent: rarely, since awaiting children spends none.
   */
  private checkCpu(): void {
    if (this.settled) return;
    // Spent before turn (the worker writes them in the other order): a turn ending between the two
    // reads is then counted in neither, never in both.
    const spent = Atomics.load(this.shared, SHARED_SPENT);
    const turn = Atomics.load(this.shared, SHARED_TURN);
    const stated = Atomics.load(this.shared, SHARED_TURN_AT);
    const now = performance.now();
    if (turn === 0) this.seenTurn = undefined;
    else if (this.seenTurn?.turn !== turn) {
      this.seenTurn = { turn, startedAt: now - believedRunning({ sinceLastLook: now - this.lastLook, byWallClock: Date.now() - this.clockOrigin - stated }) };
    }
    this.lastLook = now;
    const running = this.seenTurn ? now - this.seenTurn.startedAt : 0;
    const left = this.limits.cpuMs + CPU_WATCHDOG_GRACE_MS - spent - running;
    if (left > 0) return this.watchCpu(this.seenTurn ? Math.min(left, CPU_WATCHDOG_GRACE_MS) : left);
    // The worker is inside that one operation: it could not answer a stop, so it is not asked.
    this.stop({ kind: "limit", code: "cpuMs", message: `${limitMessage("cpuMs", this.limits)}: one operation inside the sandbox ran past it without returning` }, false);
  }

  /**
   * Interrupt the VM, take the output its worker still holds, then terminate the worker: a stopped
   * worker is never reused. The worker sends output at most every 10 ms, and what it sent may still
   * be on its way: it is asked to stop and answers "stopped" after everything it sent, so the lines
   * a script printed before its wall time ran out (or it was cancelled) are its output too. A worker
   * stuck in one native call never answers (the CPU watchdog's stop does not ask it): it is
   * terminated after STOP_DRAIN_MS.
   */
  private stop(error: WorkflowError, drain = true): void {
    if (this.settled || this.stopping) return;
    Atomics.store(this.shared, SHARED_STOP, 1);
    if (!drain || !this.pooled) return this.stopped(error);
    this.stopping = error;
    this.ended.abort(); // the host calls still running stop now, as they would at the end
    this.pooled.worker.postMessage({ type: "stop" } satisfies MainToWorker);
    this.stopDrain = setTimeout(() => this.stopped(error), STOP_DRAIN_MS);
  }

  private stopped(error: WorkflowError): void {
    if (this.settled) return;
    this.stopping = undefined;
    clearTimeout(this.stopDrain);
    const pooled = this.detach();
    if (pooled) releaseWorker(pooled, false);
    this.finish(this.failure(error));
  }

  private crash(message: string): void {
    if (this.settled) return;
    // A worker that dies while it is being stopped ends the run as stopped, not as a crash.
    if (this.stopping) return this.stopped(this.stopping);
    const pooled = this.detach();
    if (pooled) releaseWorker(pooled, false);
    this.finish(this.failure({ kind: "sandbox", message }));
  }

  private detach(): PooledWorker | undefined {
    const pooled = this.pooled;
    pooled?.worker.off("message", this.onMessage).off("error", this.onError).off("exit", this.onExit);
    this.pooled = undefined;
    return pooled;
  }

  private mapFailure(failure: VmFailure): WorkflowError {
    // The worker bounds these already; the host does not rely on it.
    const error: WorkflowError = { kind: failure.kind, message: capText(failure.message, MAX_ERROR_MESSAGE_CHARS) };
    if (failure.code !== undefined) error.code = failure.code;
    if (failure.runId !== undefined) error.runId = failure.runId;
    if (failure.kind !== "script") return error;
    error.name = failure.name ?? "Error";
    if (failure.stack !== undefined) {
      const mapped = mapStack(failure.stack, this.filename, this.workflow.body.split("\n").length);
      error.stack = mapped.stack ? `${error.name}: ${failure.message}\n${mapped.stack}` : `${error.name}: ${failure.message}`;
      if (mapped.position) {
        error.line = mapped.position.line;
        error.column = mapped.position.column;
      }
    }
    return error;
  }

  private failure(error: WorkflowError): WorkflowResult {
    return { ok: false, error, output: this.output, replay: this.replay };
  }

  private emit(event: WorkflowEvent): void {
    if (this.settled || !this.options.onEvent) return;
    try {
      this.options.onEvent(event);
    } catch {
      // A journaling hook that throws must not change the run's outcome.
    }
  }

  private finish(result: WorkflowResult): void {
    if (this.settled) return;
    // Last events: the end of each call still running, so every start has an end.
    this.bridge.close();
    this.settled = true;
    clearTimeout(this.timer);
    clearTimeout(this.watchdog);
    clearTimeout(this.stopDrain);
    this.options.signal?.removeEventListener("abort", this.onAbort);
    this.resolve(result);
    this.ended.abort();
    this.releaseHeap?.();
  }
}
