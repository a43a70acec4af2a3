// Messages between runWorkflow (main thread) and the worker that owns the QuickJS VM.
// Payloads that came from or go to the script are JSON text, parsed on the receiving side.
import type { LimitName, WorkflowLimits } from "./types.ts";

/** File name the prelude runs under, so its stack frames never map onto the script. */
export const PRELUDE_FILENAME = "flow:prelude";

export interface WorkerBoot {
  /** The QuickJS WebAssembly.Module, compiled once in the main thread and instantiated per worker. */
  wasmModule: object;
  /** The VM prelude (see prelude.ts). */
  prelude: string;
  /** Sources of the globals the prelude compiles on first use (the helper library, discovery). */
  chunks: string[];
  /** The most WebAssembly memory this worker may grow to (see limits.ts wasmMemoryCap). */
  wasmMaxBytes: number;
}

export interface RunConfig {
  /** JSON text of the frozen `args`. */
  argsText: string;
  toolNames: string[];
  startedAt: number;
  seedState: [number, number, number, number];
  /** Initial store entries as [key, JSON text]. */
  store: Array<[string, string]>;
}

export interface RunMessage {
  type: "run";
  filename: string;
  /** The script body with its functions' catches added (frame-guard.ts). */
  body: string;
  /** The wrapper class's name, which the script does not use (frame-guard.ts). */
  hook: string;
  limits: WorkflowLimits;
  config: RunConfig;
  /** The run's shared words, an Int32Array of SHARED_WORDS (below). */
  shared: SharedArrayBuffer;
  /** Epoch ms the worker states its turns' starts from (`SHARED_TURN_AT`). */
  clockOrigin: number;
}

/**
 * The words a run's main thread and its worker share. `SHARED_STOP`: non-zero asks the VM to stop
 * at its next interrupt check (main → worker). `SHARED_SPENT`: the ms of CPU the VM spent in its
 * finished turns, as the worker's own monotonic clock measured them; `SHARED_TURN`: the number of
 * the running turn (counting from 1), 0 between turns; `SHARED_TURN_AT`: when that turn started, by
 * the wall clock, in ms after `clockOrigin` (worker → main). The main thread's watchdog reads them
 * to stop a run whose one native call runs past `cpuMs`, which QuickJS's interrupt check cannot
 * see. The wall clock can step, so the watchdog believes a turn's start only within what its own
 * monotonic clock allows (run-workflow.ts).
 */
export const SHARED_STOP = 0;
export const SHARED_SPENT = 1;
export const SHARED_TURN = 2;
export const SHARED_TURN_AT = 3;
export const SHARED_WORDS = 4;

export interface HostFailure {
  name?: string;
  message: string;
  code?: string;
  runId?: string;
  /**
   * Set only by the runtime, for a limit it enforced: the prelude remembers the error object, so
   * only such an error (not one a script builds with the same `code`) can end a run as kind "limit".
   */
  limit?: LimitName;
}

export type ReplyMessage =
  | { type: "reply"; id: number; ok: true; text: string }
  | { type: "reply"; id: number; ok: false; error: HostFailure };

/** The replies the host had for the worker in one turn of its event loop: one message, one wake-up. */
export interface RepliesMessage {
  type: "replies";
  replies: ReplyMessage[];
}

/**
 * The host stopped the run (its wall time, a cancel): the worker ends the run, sending the output it
 * still holds, then answers "stopped". Everything it sent before that reply reaches the host first.
 */
export interface StopMessage {
  type: "stop";
}

export type MainToWorker = RunMessage | ReplyMessage | RepliesMessage | StopMessage;

/** agent(), tools.*(), and describeTool()/searchTools() ("discover", answered from the tools' declarations). */
export type CallKind = "agent" | "tool" | "discover";
const CALL_KINDS: ReadonlySet<unknown> = new Set(["agent", "tool", "discover"]);

export interface VmFailure {
  kind: "script" | "limit" | "sandbox";
  code?: string;
  name?: string;
  message: string;
  stack?: string;
  runId?: string;
}

export type VmOutcome = { ok: true; text?: string } | { ok: false; error: VmFailure };

/** `at`: the script's frame that made the call, for a refusal the host raises (bridge.ts). */
export type CallMessage = { type: "call"; id: number; kind: CallKind; name: string; text: string; at?: string };

export type WorkerToMain =
  | { type: "ready" }
  /** The worker prepared (ok) or failed to prepare the VM its next run starts on; sent while idle. */
  | { type: "prepared"; ok: boolean }
  | { type: "boot_error"; message: string }
  | CallMessage
  /** The calls one turn of the VM made (a parallel() of many agent() calls): one message for all. */
  | { type: "calls"; calls: CallMessage[] }
  | { type: "output"; text: string }
  | { type: "store"; key: string; text?: string }
  | { type: "done"; outcome: VmOutcome; reusable: boolean }
  /** The answer to "stop": every message the worker sent for the run is before it. */
  | { type: "stopped" };

// Run-time guards: a message crossing the thread boundary is checked, never trusted by a cast.
type Fields = Record<string, unknown>;
const isObject = (value: unknown): value is Fields => value !== null && typeof value === "object" && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === "string";
const isId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;
const FAILURE_KINDS: ReadonlySet<unknown> = new Set(["script", "limit", "sandbox"]);

function optionalStrings(fields: Fields, keys: readonly string[]): boolean {
  return keys.every((key) => fields[key] === undefined || isString(fields[key]));
}

function isVmOutcome(value: unknown): value is VmOutcome {
  if (!isObject(value)) return false;
  if (value.ok === true) return value.text === undefined || isString(value.text);
  const error = value.error;
  return value.ok === false && isObject(error) && FAILURE_KINDS.has(error.kind) && isString(error.message) && optionalStrings(error, ["code", "name", "stack", "runId"]);
}

const isCall = (value: unknown): value is CallMessage =>
  isObject(value) && value.type === "call" && isId(value.id) && CALL_KINDS.has(value.kind) && isString(value.name) && isString(value.text) && (value.at === undefined || isString(value.at));

export function isWorkerToMain(value: unknown): value is WorkerToMain {
  if (!isObject(value)) return false;
  switch (value.type) {
    case "ready":
    case "stopped":
      return true;
    case "prepared":
      return typeof value.ok === "boolean";
    case "boot_error":
      return isString(value.message);
    case "output":
      return isString(value.text);
    case "call":
      return isCall(value);
    case "calls":
      return Array.isArray(value.calls) && value.calls.length > 0 && value.calls.every(isCall);
    case "store":
      return isString(value.key) && (value.text === undefined || isString(value.text));
    case "done":
      return typeof value.reusable === "boolean" && isVmOutcome(value.outcome);
    default:
      return false;
  }
}

function isReply(value: unknown): value is ReplyMessage {
  if (!isObject(value) || value.type !== "reply" || !isId(value.id)) return false;
  if (value.ok === true) return isString(value.text);
  return value.ok === false && isObject(value.error) && isString(value.error.message);
}

export function isMainToWorker(value: unknown): value is MainToWorker {
  if (!isObject(value)) return false;
  if (value.type === "reply") return isReply(value);
  if (value.type === "stop") return true;
  if (value.type === "replies") return Array.isArray(value.replies) && value.replies.length > 0 && value.replies.every(isReply);
  return value.type === "run" && isString(value.filename) && isString(value.body) && isString(value.hook) && isObject(value.limits) && isObject(value.config) && value.shared instanceof SharedArrayBuffer && typeof value.clockOrigin === "number";
}
