import { Worker } from "node:worker_threads";
import { violationOf, type SchemaViolation } from "../contract/schema-violation.ts";
import { processGlobal } from "../../runtime/process-global.ts";

/**
 * An outputSchema's `pattern` is written by a model that reads untrusted content, and a pattern
 * such as ^(a+)+$ backtracks for minutes or forever on a 40-character string. Checked on the
 * host's main thread, that would freeze the user's Pi; so an answer whose schema holds a pattern
 * is checked in a worker that is terminated past PATTERN_CHECK_LIMIT_MS (docs/contract.md).
 */

/** How long checking one answer may run in its worker before the check, and the child, fail. */
export const PATTERN_CHECK_LIMIT_MS = 3000;

/** Whether `schema` holds a `pattern` or `patternProperties` anywhere; checked without recursion. */
export function schemaHoldsPattern(schema: unknown): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === null || typeof next !== "object") continue;
    if (!Array.isArray(next) && ("pattern" in next || "patternProperties" in next)) return true;
    for (const child of Object.values(next)) if (child !== null && typeof child === "object") stack.push(child);
  }
  return false;
}

export type PatternCheck =
  | { kind: "checked"; violation: SchemaViolation | undefined }
  | { kind: "too_slow"; pattern: string | undefined }
  | { kind: "error"; message: string };

type WorkerMessage =
  | { id: number; type: "started" }
  | { id: number; type: "pattern"; source: string }
  | { id: number; type: "checked"; error: { path?: string; message?: string } | null }
  | { id: number; type: "error"; message: string };

interface Job {
  id: number;
  value: unknown;
  schema: Record<string, unknown>;
  limitMs: number;
  resolve(result: PatternCheck): void;
}

/**
 * One worker for every check, started with the first and kept while the process lives (a worker
 * each would cost a thread start per child of a large fan-out): checks run one at a time, each
 * with its own limit counted from when it starts. A check past its limit terminates the worker;
 * the checks queued behind it go to a new one.
 */
class PatternChecker {
  private worker: Worker | null = null;
  private readonly queue: Job[] = [];
  private current: { job: Job; pattern: string | undefined; timer: NodeJS.Timeout | undefined } | null = null;
  private nextId = 0;

  check(value: unknown, schema: Record<string, unknown>, limitMs: number): Promise<PatternCheck> {
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, value, schema, limitMs, resolve });
      this.pump();
    });
  }

  private pump(): void {
    if (this.current !== null) return;
    const job = this.queue.shift();
    if (job === undefined) {
      this.worker?.unref(); // idle: it does not keep the process alive
      return;
    }
    const worker = this.started();
    worker.ref();
    this.current = { job, pattern: undefined, timer: undefined };
    worker.postMessage({ id: job.id, value: job.value, schema: job.schema });
  }

  private started(): Worker {
    if (this.worker !== null) return this.worker;
    const worker = new Worker(new URL("./pattern-check-worker.js", import.meta.url));
    worker.on("message", (message: WorkerMessage) => this.onMessage(message));
    worker.on("error", (error) => this.lost(worker, error.message));
    worker.on("exit", (code) => this.lost(worker, `the checking worker exited (code ${code}) before it answered`));
    this.worker = worker;
    return worker;
  }

  private onMessage(message: WorkerMessage): void {
    const current = this.current;
    if (current === null || message.id !== current.job.id) return;
    if (message.type === "started") {
      // The limit counts from when the check starts, not while a busy host loads the worker.
      current.timer = setTimeout(() => this.stop(current.job), current.job.limitMs);
    } else if (message.type === "pattern") current.pattern = message.source;
    else if (message.type === "checked") this.finish({ kind: "checked", violation: message.error === null ? undefined : violationOf(message.error) });
    else this.finish({ kind: "error", message: message.message });
  }

  /** The running check is past its limit: its worker is stuck in a pattern, and ends. */
  private stop(job: Job): void {
    const current = this.current;
    if (current === null || current.job !== job) return;
    const worker = this.worker;
    this.worker = null;
    this.finish({ kind: "too_slow", pattern: current.pattern });
    void worker?.terminate();
  }

  /** The worker failed or exited on its own: the running check fails with why; queued ones go to a new worker. */
  private lost(worker: Worker, message: string): void {
    if (this.worker !== worker) return; // one this checker terminated
    this.worker = null;
    if (this.current !== null) this.finish({ kind: "error", message });
  }

  private finish(result: PatternCheck): void {
    const current = this.current;
    if (current === null) return;
    clearTimeout(current.timer);
    this.current = null;
    current.job.resolve(result);
    this.pump();
  }
}

const checker = processGlobal("pi-flow.pattern-checker", () => new PatternChecker());

/** Checks `value` against `schema` in the checking worker; the host's event loop keeps turning meanwhile. */
export function checkInWorker(value: unknown, schema: Record<string, unknown>, limitMs = PATTERN_CHECK_LIMIT_MS): Promise<PatternCheck> {
  return checker.check(value, schema, limitMs);
}
