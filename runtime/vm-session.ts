// One run's QuickJS VM, inside the worker. It owns the VM-side limits (memory, stack, output,
// store, result size) and turns host requests into messages; agent/tool policy lives in the
// main thread (bridge.ts), which answers through reply().
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten";
import { isLimitName, limitMessage } from "./limits.ts";
import { PRELUDE_FILENAME, type CallKind, type ReplyMessage, type RunMessage, type VmFailure, type VmOutcome, type WorkerToMain } from "./protocol.ts";
import type { LimitName } from "./types.ts";

type HostReply = { ok: true; value: unknown } | { ok: false; error: { name: string; message: string; code?: string; limit?: LimitName } };

interface ThrownInfo {
  name?: string;
  message?: string;
  stack?: string;
  code?: string;
  runId?: string;
  /** The limit the runtime itself raised this error for; set only by the prelude's errorInfo(). */
  limit?: string;
}

/** One wrapper line before the body (errors.ts WRAPPER_LINES); the body keeps its own lines and columns. */
export function wrapScript(body: string): string {
  return `__flow_start(async function () { "use strict";\n${body}\n});`;
}

export class VmSession {
  private readonly message: RunMessage;
  private readonly post: (message: WorkerToMain) => void;
  private readonly stop: Int32Array;
  private readonly rt: QuickJSRuntime;
  private readonly vm: QuickJSContext;
  private deliver: QuickJSHandle | undefined;
  private nextId = 1;
  private readonly inflight = new Set<number>();
  private outcome: VmOutcome | undefined;
  private outputChars = 0;
  private readonly store = new Map<string, string>();
  private storeChars = 0;
  private storeWrites = 0;
  private storeWriteChars = 0;
  private closed = false;

  constructor(module: QuickJSWASMModule, message: RunMessage, post: (message: WorkerToMain) => void) {
    this.message = message;
    this.post = post;
    this.stop = new Int32Array(message.stopFlag);
    for (const [key, text] of message.config.store) {
      this.store.set(key, text);
      this.storeChars += key.length + text.length;
    }
    this.rt = module.newRuntime();
    this.rt.setMemoryLimit(message.limits.memoryBytes);
    this.rt.setMaxStackSize(message.limits.stackBytes);
    // Checked by QuickJS every few thousand operations: a spinning script stops here.
    this.rt.setInterruptHandler(() => this.outcome !== undefined || Atomics.load(this.stop, 0) !== 0);
    this.vm = this.rt.newContext();
  }

  start(prelude: string): void {
    const host = this.vm.newFunction("__flow_host", (...args) => this.vm.newString(JSON.stringify(this.onHost(args))));
    this.vm.setProp(this.vm.global, "__flow_host", host);
    host.dispose();
    this.evaluate(prelude, PRELUDE_FILENAME, "sandbox");
    if (this.outcome === undefined) this.evaluate(wrapScript(this.message.body), this.message.filename, "script");
    this.pump();
  }

  reply(message: ReplyMessage): void {
    if (this.closed || !this.inflight.delete(message.id) || !this.deliver) return;
    const vm = this.vm;
    const args = [
      vm.newNumber(message.id),
      message.ok ? vm.true : vm.false,
      vm.newString(message.ok ? message.text : JSON.stringify(message.error)),
    ];
    const result = vm.callFunction(this.deliver, vm.undefined, ...args);
    for (const arg of args) arg.dispose();
    if (result.error) this.fail(result.error);
    else result.value.dispose();
    this.pump();
  }

  private evaluate(code: string, filename: string, failureKind: "sandbox" | "script"): void {
    const result = this.vm.evalCode(code, filename);
    if (!result.error) return result.value.dispose();
    if (failureKind === "sandbox" && this.outcome === undefined) {
      const info = this.read(result.error);
      result.error.dispose();
      const failure = this.classify(info);
      this.outcome = { ok: false, error: failure.kind === "limit" ? failure : { kind: "sandbox", message: `prelude failed: ${info.message ?? ""}` } };
      return;
    }
    this.fail(result.error);
  }

  /** Runs queued jobs, then ends the run if it settled, failed, or can no longer make progress. */
  private pump(): void {
    if (this.closed) return;
    if (this.outcome === undefined) {
      const jobs = this.rt.executePendingJobs();
      if (jobs.error) this.fail(jobs.error);
    }
    if (this.outcome === undefined && this.inflight.size === 0) {
      this.outcome = {
        ok: false,
        error: { kind: "script", name: "Error", message: "the workflow awaits a promise that can never settle: no agent() or tool call is pending" },
      };
    }
    if (this.outcome !== undefined) this.finish(this.outcome);
  }

  private finish(outcome: VmOutcome): void {
    this.closed = true;
    let reusable = outcome.ok || outcome.error.kind === "script";
    try {
      this.deliver?.dispose();
      this.vm.dispose();
      this.rt.dispose();
    } catch {
      // A leaked handle aborts the WASM instance: this worker must not run another script.
      reusable = false;
    }
    this.post({ type: "done", outcome, reusable });
  }

  private fail(handle: QuickJSHandle): void {
    const info = this.read(handle);
    handle.dispose();
    this.outcome ??= { ok: false, error: this.classify(info) };
  }

  /** An uncaught value read straight from the VM: script-shaped, so it never carries `limit`. */
  private read(handle: QuickJSHandle): ThrownInfo {
    try {
      const value: unknown = this.vm.dump(handle);
      if (value !== null && typeof value === "object") return thrownInfo(value);
      return { name: "Error", message: `uncaught ${String(value)}` };
    } catch {
      return { name: "Error", message: "uncaught error that could not be read" };
    }
  }

  private classify(info: ThrownInfo): VmFailure {
    const limits = this.message.limits;
    const limitHit = (name: LimitName): VmFailure => ({ kind: "limit", code: name, message: limitMessage(name, limits) });
    if (info.name === "InternalError" && /out of memory/i.test(info.message ?? "")) return limitHit("memoryBytes");
    if (info.name === "InternalError" && /stack overflow/i.test(info.message ?? "")) return limitHit("stackBytes");
    // QuickJS's parsers (JSON.parse of deep nesting, eval) report the same overflow as a SyntaxError.
    if (info.name === "SyntaxError" && info.message === "stack overflow") return limitHit("stackBytes");
    // Only an error the runtime raised for a limit counts; a script's own `code: "agentCalls"` does not.
    if (info.limit !== undefined && isLimitName(info.limit)) return { kind: "limit", code: info.limit, message: info.message ?? limitMessage(info.limit, limits) };
    const failure: VmFailure = { kind: "script", name: info.name ?? "Error", message: info.message ?? "" };
    if (info.stack) failure.stack = info.stack;
    if (info.code !== undefined) failure.code = info.code;
    if (info.runId !== undefined) failure.runId = info.runId;
    return failure;
  }

  private onHost(args: QuickJSHandle[]): HostReply {
    const vm = this.vm;
    const str = (index: number): string | undefined => {
      const handle = args[index];
      return handle !== undefined && vm.typeof(handle) === "string" ? vm.getString(handle) : undefined;
    };
    const op = str(0);
    if (this.outcome !== undefined && op !== "register") return refuse("Error", "the workflow run has ended");
    if (this.lostString(args, str)) {
      const message = limitMessage("memoryBytes", this.message.limits);
      this.outcome = { ok: false, error: { kind: "limit", code: "memoryBytes", message } };
      return refuse("InternalError", message, "memoryBytes");
    }
    switch (op) {
      case "config": {
        const { config } = this.message;
        return { ok: true, value: { argsText: config.argsText, toolNames: config.toolNames, startedAt: config.startedAt, seedState: config.seedState } };
      }
      case "register": {
        this.deliver = args[1]?.dup();
        return { ok: true, value: null };
      }
      case "send": {
        const kind = str(1);
        if (kind !== "agent" && kind !== "tool") return refuse("TypeError", `unknown call kind ${String(kind)}`);
        return this.send(kind, str(2) ?? "", str(3) ?? "null");
      }
      case "out":
        return this.output(str(1) ?? "");
      case "store":
        return this.storeValue(str(1) ?? "", str(2));
      case "load":
        return { ok: true, value: this.store.get(str(1) ?? "") ?? null };
      case "finish":
        return this.settle(str(1), str(2));
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

  private send(kind: CallKind, name: string, text: string): HostReply {
    // Checked here, before the JSON is copied to the host: an oversized call never leaves the worker.
    if (text.length > this.message.limits.callArgsChars) {
      const what = kind === "agent" ? "agent() options have" : `tools.${name}() arguments have`;
      return refuseLimit("callArgsChars", `${limitMessage("callArgsChars", this.message.limits)}: ${what} ${text.length} characters of JSON`);
    }
    const id = this.nextId++;
    this.inflight.add(id);
    this.post({ type: "call", id, kind, name, text });
    return { ok: true, value: id };
  }

  private output(text: string): HostReply {
    const limit = this.message.limits.outputChars;
    const room = limit - this.outputChars;
    if (text.length <= room) {
      this.outputChars += text.length;
      if (text.length > 0) this.post({ type: "output", text });
      return { ok: true, value: null };
    }
    // Keep what fits, then fail the run: output past the limit is never silently dropped.
    if (room > 0) this.post({ type: "output", text: text.slice(0, room) });
    this.outputChars = limit;
    const message = limitMessage("outputChars", this.message.limits);
    this.outcome = { ok: false, error: { kind: "limit", code: "outputChars", message } };
    return refuse("RangeError", message, "outputChars");
  }

  private storeValue(key: string, text: string | undefined): HostReply {
    const limits = this.message.limits;
    const old = this.store.get(key);
    const oldChars = old === undefined ? 0 : key.length + old.length;
    // Each write (deletes too) is journaled, so the writes themselves are bounded, not just the live store.
    if (this.storeWrites >= limits.storeWrites) {
      return refuseLimit("storeWrites", `${limitMessage("storeWrites", limits)}: store() was called ${this.storeWrites} times in this run`);
    }
    const written = this.storeWriteChars + key.length + (text?.length ?? 0);
    if (text === undefined) {
      this.count(written);
      this.store.delete(key);
      this.storeChars -= oldChars;
      this.post({ type: "store", key });
      return { ok: true, value: null };
    }
    if (text.length > limits.storeValueChars) {
      return refuseLimit("storeValueChars", `${limitMessage("storeValueChars", limits)}: store(${JSON.stringify(key)}) value has ${text.length} characters of JSON`);
    }
    const total = this.storeChars - oldChars + key.length + text.length;
    if (total > limits.storeTotalChars) {
      return refuseLimit("storeTotalChars", `${limitMessage("storeTotalChars", limits)}: the store would hold ${total} characters; delete keys with store(key, undefined)`);
    }
    if (written > limits.storeWriteChars) {
      return refuseLimit("storeWriteChars", `${limitMessage("storeWriteChars", limits)}: store() would have written ${written} characters in this run`);
    }
    this.count(written);
    this.store.set(key, text);
    this.storeChars = total;
    this.post({ type: "store", key, text });
    return { ok: true, value: null };
  }

  private count(written: number): void {
    this.storeWrites++;
    this.storeWriteChars = written;
  }

  private settle(kind: string | undefined, text: string | undefined): HostReply {
    if (kind === "error") {
      let info: ThrownInfo;
      try {
        info = JSON.parse(text ?? "{}") as ThrownInfo;
      } catch {
        info = { name: "Error", message: "uncaught error that could not be read" };
      }
      this.outcome = { ok: false, error: this.classify(info) };
    } else if (text !== undefined && text.length > this.message.limits.resultChars) {
      this.outcome = { ok: false, error: { kind: "limit", code: "resultChars", message: `${limitMessage("resultChars", this.message.limits)}: the return value has ${text.length} characters of JSON` } };
    } else {
      this.outcome = text === undefined ? { ok: true } : { ok: true, text };
    }
    return { ok: true, value: null };
  }
}

function refuse(name: string, message: string, code?: string): HostReply {
  return { ok: false, error: code === undefined ? { name, message } : { name, message, code } };
}

/** A catchable RangeError for a limit the runtime enforces; uncaught, it ends the run as kind "limit". */
function refuseLimit(limit: LimitName, message: string): HostReply {
  return { ok: false, error: { name: "RangeError", message, code: limit, limit } };
}

/** Copies the readable fields of a thrown object; anything else it carries is dropped. */
function thrownInfo(value: object): ThrownInfo {
  const source = value as Record<string, unknown>;
  const info: ThrownInfo = {};
  for (const key of ["name", "message", "stack", "code", "runId"] as const) {
    const field = source[key];
    if (typeof field === "string") info[key] = field;
  }
  return info;
}
