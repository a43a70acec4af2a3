// Messages between runWorkflow (main thread) and the worker that owns the QuickJS VM.
// Payloads that came from or go to the script are JSON text, parsed on the receiving side.
import type { LimitName, WorkflowLimits } from "./types.ts";

/** File name the prelude runs under, so its stack frames never map onto the script. */
export const PRELUDE_FILENAME = "flow:prelude";

export interface WorkerBoot {
  /** The QuickJS WebAssembly.Module, compiled once in the main thread and instantiated per worker. */
  wasmModule: object;
  /** The VM prelude and helper library (see prelude.ts). */
  prelude: string;
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
  body: string;
  limits: WorkflowLimits;
  config: RunConfig;
  /** Int32Array(1) view target: non-zero asks the VM to stop at its next interrupt check. */
  stopFlag: SharedArrayBuffer;
}

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

export type MainToWorker = RunMessage | ReplyMessage;

export type CallKind = "agent" | "tool";

export interface VmFailure {
  kind: "script" | "limit" | "sandbox";
  code?: string;
  name?: string;
  message: string;
  stack?: string;
  runId?: string;
}

export type VmOutcome = { ok: true; text?: string } | { ok: false; error: VmFailure };

export type WorkerToMain =
  | { type: "ready" }
  | { type: "boot_error"; message: string }
  | { type: "call"; id: number; kind: CallKind; name: string; text: string }
  | { type: "output"; text: string }
  | { type: "store"; key: string; text?: string }
  | { type: "done"; outcome: VmOutcome; reusable: boolean };
