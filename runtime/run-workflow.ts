// runWorkflow: one run from start to result. The promise never rejects for anything the script
// or the host does; every ending is a WorkflowResult.
import { basename } from "node:path";
import { HostBridge } from "./bridge.ts";
import { CpuWatchdog } from "./cpu-watchdog.ts";
import { freshSeed } from "./determinism.ts";
import { guardFrames, type GuardedBody } from "./frame-guard.ts";
import { decodeJson } from "./json.ts";
import { limitMessage, wasmMemoryCap } from "./limits.ts";
import { takeSyntaxTree } from "./parse.ts";
import { acquireWorker, releaseWorker, type PooledWorker } from "./pool.ts";
import { isWorkerToMain, SHARED_STOP, SHARED_WORDS, type MainToWorker, type ReplyMessage, type RunConfig, type VmOutcome, type WorkerToMain } from "./protocol.ts";
import { locateRefusal, mapVmFailure, type ScriptPlace } from "./run-failure.ts";
import { prepareRun } from "./run-inputs.ts";
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

/** How long a stopped run's worker has to send what it still holds and answer (see stop). */
const STOP_DRAIN_MS = 250;

export async function runWorkflow(workflow: ParsedWorkflow, options: RunWorkflowOptions): Promise<WorkflowResult> {
  const replay = { seed: options.seed === undefined ? freshSeed() : String(options.seed), startedAt: options.startedAt ?? Date.now() };
  const early = (error: WorkflowError): WorkflowResult => ({ ok: false, error, output: "", replay });

  const prepared = prepareRun(workflow, options, replay);
  if ("error" in prepared) return early(prepared.error);
  const { limits, config } = prepared;
  return new RunSession(workflow, options, limits, config, replay).start();
}

class RunSession {
  private readonly options: RunWorkflowOptions;
  private readonly limits: WorkflowLimits;
  private readonly config: RunConfig;
  private readonly replay: WorkflowResult["replay"];
  /** How the script's stacks name it, to map them back to the author's positions (run-failure.ts). */
  private readonly script: ScriptPlace;
  /** The body the VM runs: each function hands what it throws to the prelude (frame-guard.ts). */
  private readonly guarded: GuardedBody;
  /** The words the run shares with its worker (protocol.ts): the stop flag, the CPU the VM spent. */
  private readonly shared = new Int32Array(new SharedArrayBuffer(SHARED_WORDS * Int32Array.BYTES_PER_ELEMENT));
  /** Stops a run whose one native call runs past cpuMs (cpu-watchdog.ts). */
  private readonly watchdog: CpuWatchdog;
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
    this.options = options;
    this.limits = limits;
    this.config = config;
    this.replay = replay;
    // Stack frames are matched by this name, so keep it free of spaces and parentheses.
    this.guarded = guardFrames(workflow.body, takeSyntaxTree(workflow));
    const filename = (workflow.path ? basename(workflow.path) : workflow.origin === "inline" ? "inline.js" : "workflow.js").replace(/[\s()]/g, "_");
    this.script = { filename, lines: workflow.body.split("\n").length, shifts: this.guarded.shifts };
    // The worker is inside that one operation: it could not answer a stop, so it is not asked.
    this.watchdog = new CpuWatchdog(this.shared, limits.cpuMs, () =>
      this.stop({ kind: "limit", code: "cpuMs", message: `${limitMessage("cpuMs", this.limits)}: one operation inside the sandbox ran past it without returning` }, false),
    );
    this.bridge = new HostBridge(options.host, limits, options.tree?.budget, {
      emit: (event) => this.emit(event),
      reply: (message) => this.queueReply(message),
      fatal: (error, at) => this.stop(locateRefusal(error, at, this.script)),
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
        const clockOrigin = Date.now();
        pooled.worker.postMessage({
          type: "run",
          filename: this.script.filename,
          body: this.guarded.code,
          hook: this.guarded.hook,
          limits: this.limits,
          config: this.config,
          shared: this.shared.buffer as SharedArrayBuffer,
          clockOrigin,
        });
        this.watchdog.start(clockOrigin);
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
    this.finish(this.failure(mapVmFailure(outcome.error, this.script)));
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
    this.watchdog.stop();
    clearTimeout(this.stopDrain);
    this.options.signal?.removeEventListener("abort", this.onAbort);
    this.resolve(result);
    this.ended.abort();
    this.releaseHeap?.();
  }
}
