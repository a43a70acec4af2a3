// One run's QuickJS VM, inside the worker. It owns the VM-side limits (memory, stack, output,
// store, result size) and turns host requests into messages; agent/tool policy lives in the
// main thread (bridge.ts), which answers through reply(). The VM comes prepared (vm-prepared.ts):
// the run configures it, runs the script in it and disposes it.
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten";
import { limitMessage } from "./limits.ts";
import { CpuMeter } from "./cpu-meter.ts";
import { SHARED_STOP, type CallKind, type ReplyMessage, type RunMessage, type VmFailure, type VmOutcome, type WorkerToMain } from "./protocol.ts";
import { capText, MAX_STACK_CHARS } from "./text.ts";
import { overHostBytes, settledValue, valueTooDeep } from "./vm-checks.ts";
import { classifyThrown, ends, limitFailure, parseThrownInfo, refuse, refuseLimit, thrownInfo, type ThrownInfo } from "./vm-failure.ts";
import { scriptFrame, wrapScript } from "./vm-script.ts";
import type { HostReply, PreparedVm } from "./vm-prepared.ts";
import { VmOutput } from "./vm-output.ts";
import { VmStore } from "./vm-store.ts";
import { HeapGauge } from "./vm-heap.ts";

/** The limit that counts each kind of call. */
const CALL_LIMITS = { agent: "agentCalls", tool: "toolCalls" } as const;


export class VmSession {
  private readonly message: RunMessage;
  private readonly post: (message: WorkerToMain) => void;
  private readonly stop: Int32Array;
  private readonly prepared: PreparedVm;
  private readonly rt: QuickJSRuntime;
  private readonly vm: QuickJSContext;
  private readonly cpu: CpuMeter;
  /** What the run's heap holds, when readable: the interrupt handler and host calls end the run past memoryBytes (vm-heap.ts). */
  private readonly heap: HeapGauge | undefined;
  private memoryExceeded = false;
  private nextId = 1;
  /** Calls the host has not answered yet, with the characters of JSON each sent over. */
  private readonly inflight = new Map<number, number>();
  private inflightChars = 0;
  /** agent() and tools.* calls sent so far: the host counts them too, but only once they arrive. */
  private readonly sentCalls = { agent: 0, tool: 0 };
  private outcome: VmOutcome | undefined;
  private readonly out: VmOutput;
  private readonly store: VmStore;
  private closed = false;
  /** Sources of the prelude's lazily compiled globals, handed to the VM on first use. */
  private chunks: readonly string[] = [];

  constructor(prepared: PreparedVm, message: RunMessage, post: (message: WorkerToMain) => void) {
    this.prepared = prepared;
    this.message = message;
    this.post = post;
    this.stop = new Int32Array(message.shared);
    this.store = new VmStore(message.limits, message.config.store);
    this.out = new VmOutput(message.limits.outputChars, post);
    this.cpu = new CpuMeter(message.limits.cpuMs, this.stop, message.clockOrigin);
    this.rt = prepared.rt;
    this.vm = prepared.vm;
    // The prelude's allocations so far count against this limit too: QuickJS counts what the
    // runtime holds, not what was allocated after the limit was set.
    this.heap = HeapGauge.attach(this.rt, message.limits.memoryBytes);
    this.rt.setMaxStackSize(message.limits.stackBytes);
    // Checked by QuickJS every few thousand operations: a spinning script stops here.
    this.rt.setInterruptHandler(() => {
      this.out.flushIfDue();
      return this.outcome !== undefined || Atomics.load(this.stop, SHARED_STOP) !== 0 || this.cpu.over() || this.heapFull();
    });
    prepared.attach((args) => this.onHost(args));
  }

  /** Whether the run has ended and its VM is gone. */
  get ended(): boolean {
    return this.closed;
  }

  start(chunks: readonly string[]): void {
    this.chunks = chunks;
    // The run-specific part of the prelude (args, tools, clock, seed), before the script's first line.
    const failed = this.cpu.run(() => this.prepared.configure());
    if (failed) this.failSandbox(failed);
    else this.evaluate(wrapScript(this.message.body, this.message.hook), this.message.filename);
    this.pump();
  }

  /**
   * The host stopped the run between turns (a run stopped mid-turn ends at its next interrupt
   * check): it ends here, and the output it printed leaves before its "done".
   */
  halt(): void {
    if (this.closed) return;
    this.outcome ??= { ok: false, error: { kind: "sandbox", message: "the host stopped the run" } };
    this.finish(this.outcome);
  }

  /** Host replies, in the order they came; the VM's jobs then run once for all of them. */
  reply(messages: readonly ReplyMessage[]): void {
    let delivered = false;
    for (const message of messages) {
      if (this.outcome !== undefined) break; // a reply that failed the run: the rest go unread
      delivered = this.deliver(message) || delivered;
    }
    if (delivered) this.pump();
  }

  private deliver(message: ReplyMessage): boolean {
    const sent = this.inflight.get(message.id);
    const deliver = this.prepared.deliver;
    if (this.closed || sent === undefined || !deliver) return false;
    this.inflight.delete(message.id);
    this.inflightChars -= sent;
    const vm = this.vm;
    const args = [
      vm.newNumber(message.id),
      message.ok ? vm.true : vm.false,
      vm.newString(message.ok ? message.text : JSON.stringify(message.error)),
    ];
    const result = this.cpu.run(() => vm.callFunction(deliver, vm.undefined, ...args));
    for (const arg of args) arg.dispose();
    if (result.error) this.fail(result.error);
    else result.value.dispose();
    return true;
  }

  private evaluate(code: string, filename: string): void {
    const result = this.cpu.run(() => this.vm.evalCode(code, filename));
    if (!result.error) return result.value.dispose();
    this.fail(result.error);
  }

  /** The prelude's configure step failed: a limit it hit (memory, say), else a sandbox failure. */
  private failSandbox(handle: QuickJSHandle): void {
    const info = this.read(handle);
    handle.dispose();
    if (this.outcome !== undefined) return;
    const failure = this.classify(info);
    this.outcome = { ok: false, error: failure.kind === "limit" ? failure : { kind: "sandbox", message: `prelude failed: ${info.message ?? ""}` } };
  }

  /** Runs queued jobs, then ends the run if it settled, failed, or can no longer make progress. */
  private pump(): void {
    if (this.closed) return;
    if (this.outcome === undefined) {
      const jobs = this.cpu.run(() => this.rt.executePendingJobs());
      if (jobs.error) this.fail(jobs.error);
    }
    if (this.outcome === undefined && this.inflight.size === 0) {
      this.outcome = {
        ok: false,
        error: { kind: "script", name: "Error", message: "the workflow awaits a promise that can never settle: no agent() or tool call is pending" },
      };
    }
    if (this.outcome !== undefined) this.finish(this.outcome);
    else this.out.flush();
  }

  private finish(outcome: VmOutcome): void {
    this.closed = true;
    let reusable = outcome.ok || outcome.error.kind === "script";
    try {
      this.prepared.dispose();
    } catch {
      // A leaked handle aborts the WASM instance: this worker must not run another script.
      reusable = false;
    }
    this.out.postAfter({ type: "done", outcome, reusable });
  }

  private fail(handle: QuickJSHandle): void {
    const info = this.read(handle);
    handle.dispose();
    this.outcome ??= { ok: false, error: this.classify(info) };
  }

  /**
   * An uncaught value read straight from the VM: script-shaped, so it never carries `limit`. Reading
   * it runs the script's toJSON, getters and proxy traps: that is the VM's time, metered like any turn.
   */
  private read(handle: QuickJSHandle): ThrownInfo {
    try {
      return thrownInfo(this.cpu.run(() => this.vm.dump(handle)));
    } catch {
      return { name: "Error", message: "uncaught error that could not be read" };
    }
  }

  /** Past memoryBytes held (vm-heap.ts): the run ends at the next interrupt check, or as it settles (`now`). */
  private heapFull(now = false): boolean {
    if (this.heap === undefined || !this.heap.over(this.message.limits.memoryBytes, () => this.vm.newObject().dispose(), now)) return false;
    this.memoryExceeded = true;
    return true;
  }

  private classify(info: ThrownInfo): VmFailure {
    // QuickJS ends an interrupted script with an uncatchable InternalError; say which limit it was.
    if (this.cpu.exceeded) return limitFailure("cpuMs", this.message.limits);
    if (this.memoryExceeded) return limitFailure("memoryBytes", this.message.limits);
    return classifyThrown(info, this.message.limits);
  }

  private onHost(args: QuickJSHandle[]): HostReply {
    const vm = this.vm;
    const str = (index: number): string | undefined => {
      const handle = args[index];
      return handle !== undefined && vm.typeof(handle) === "string" ? vm.getString(handle) : undefined;
    };
    const op = str(0);
    if (op === "ended_at") return this.endedAt(str(1));
    if (this.outcome !== undefined) return refuse("Error", "the workflow run has ended");
    // A script that filled its heap in a few native calls (no interrupt check between them) is seen at its next call.
    if (this.lostString(args, str) || (op !== "config" && op !== "finish" && op !== "out_of_memory" && this.heapFull())) {
      const message = limitMessage("memoryBytes", this.message.limits);
      this.outcome = { ok: false, error: { kind: "limit", code: "memoryBytes", message } };
      return ends(refuse("InternalError", message, "memoryBytes"));
    }
    switch (op) {
      case "config": {
        const { config } = this.message;
        const value = { argsText: config.argsText, toolNames: config.toolNames, startedAt: config.startedAt, seedState: config.seedState, valueDepth: this.message.limits.valueDepth };
        return { ok: true, value };
      }
      case "send": {
        const kind = str(1);
        if (kind !== "agent" && kind !== "tool" && kind !== "discover") return refuse("TypeError", `unknown call kind ${String(kind)}`);
        return this.send(kind, str(2) ?? "", str(3) ?? "null", str(5));
      }
      case "out":
        return this.output(str(1) ?? "");
      case "store":
        return this.storeValue(str(1) ?? "", str(2));
      case "load":
        return { ok: true, value: this.store.get(str(1) ?? "") ?? null };
      case "chunk": {
        const source = this.chunks[Number(str(1))];
        return source === undefined ? refuse("TypeError", `unknown prelude chunk ${String(str(1))}`) : { ok: true, value: source };
      }
      case "finish":
        return this.settle(str(1), str(2));
      case "out_of_memory":
        // The prelude's uncaught(): QuickJS threw null for want of memory (prelude.ts).
        this.outcome = { ok: false, error: limitFailure("memoryBytes", this.message.limits) };
        return { ok: true, value: null };
      default:
        return refuse("TypeError", `unknown host operation ${String(op)}`);
    }
  }

  /** QuickJS hands over "" when it cannot flatten a huge string; the prelude sends the real length. */
  private lostString(args: QuickJSHandle[], str: (index: number) => string | undefined): boolean {
    const expected = args[4] !== undefined && this.vm.typeof(args[4]) === "number" ? this.vm.getNumber(args[4]) : 0;
    if (expected === 0) return false;
    const actual = (str(1)?.length ?? 0) + (str(2)?.length ?? 0) + (str(3)?.length ?? 0);
    return actual < expected;
  }

  private send(kind: CallKind, name: string, text: string, site: string | undefined): HostReply {
    const what = kind === "agent" ? "agent() options" : kind === "tool" ? `tools.${name}() arguments` : `${name}() arguments`;
    // Checked here, before the JSON is copied to the host: an oversized call never leaves the worker.
    if (text.length > this.message.limits.callArgsChars) {
      return refuseLimit("callArgsChars", `${limitMessage("callArgsChars", this.message.limits)}: ${what} have ${text.length} characters of JSON`);
    }
    const refused = valueTooDeep(text, this.message.limits, what) ?? overHostBytes(this.inflightChars + text.length + this.store.chars, this.message.limits, what);
    if (refused) return refused;
    // Past its limit a call ends the run here, as the host would: the script runs no further, so
    // nothing it does after the call (output, store writes, more calls) reaches the host.
    if (kind !== "discover" && ++this.sentCalls[kind] > this.message.limits[CALL_LIMITS[kind]]) {
      const message = limitMessage(CALL_LIMITS[kind], this.message.limits);
      this.outcome = { ok: false, error: { kind: "limit", code: CALL_LIMITS[kind], message } };
      return ends(refuse("RangeError", message, CALL_LIMITS[kind]));
    }
    const id = this.nextId++;
    this.inflight.set(id, text.length);
    this.inflightChars += text.length;
    const at = scriptFrame(site, this.message.filename);
    this.out.postAfter(at === undefined ? { type: "call", id, kind, name, text } : { type: "call", id, kind, name, text, at });
    return { ok: true, value: id };
  }

  private output(text: string): HostReply {
    if (this.out.write(text)) return { ok: true, value: null };
    const message = limitMessage("outputChars", this.message.limits);
    this.outcome = { ok: false, error: { kind: "limit", code: "outputChars", message } };
    return ends(refuse("RangeError", message, "outputChars"));
  }

  /** The stack of the script's call a run-ending refusal answered: the failure's line and column. */
  private endedAt(stack: string | undefined): HostReply {
    const outcome = this.outcome;
    if (outcome !== undefined && !outcome.ok && outcome.error.stack === undefined && stack !== undefined) outcome.error.stack = capText(stack, MAX_STACK_CHARS);
    return { ok: true, value: null };
  }

  private storeValue(key: string, text: string | undefined): HostReply {
    const refusal = this.store.check(key, text);
    if (refusal) return refuseLimit(refusal.limit, refusal.message);
    if (text !== undefined) {
      const refused = valueTooDeep(text, this.message.limits, "the store() value") ?? overHostBytes(this.inflightChars + this.store.heldAfter(key, text), this.message.limits, "the store() value");
      if (refused) return refused;
    }
    this.store.commit(key, text);
    this.out.postAfter(text === undefined ? { type: "store", key } : { type: "store", key, text });
    return { ok: true, value: null };
  }

  private settle(kind: string | undefined, text: string | undefined): HostReply {
    // A script that filled its heap in a few native calls may settle before an interrupt check sees it.
    if (this.heapFull(true)) {
      this.outcome = { ok: false, error: limitFailure("memoryBytes", this.message.limits) };
      return { ok: true, value: null };
    }
    this.outcome = kind === "error" ? { ok: false, error: this.classify(parseThrownInfo(text)) } : settledValue(text, this.message.limits);
    return { ok: true, value: null };
  }
}
