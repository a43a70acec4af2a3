import { Worker } from "node:worker_threads";
import { violationOf, type SchemaViolation } from "../contract/schema-violation.ts";
import { errorCode } from "../runs/index.ts";
import { processGlobal } from "../../runtime/process-global.ts";
import { capText } from "../../runtime/text.ts";
import { SCHEMA_WORK_LIMIT_MS, SCHEMA_WORK_MEMORY_MB } from "./schema-limits.ts";

/** The longest error message a job in the worker answers with. */
const MAX_WORKER_ERROR_CHARS = 400;

/**
 * An outputSchema is written by a model that reads untrusted content (and meta.args by a saved
 * workflow's author): a pattern such as ^(a+)+$ backtracks for minutes or forever on a
 * 40-character string, uniqueItems is quadratic in an array's length, and $refs that branch into
 * each other are exponential. Checked on the host's main thread, that would freeze the user's Pi;
 * so every check runs in a worker that is terminated past SCHEMA_WORK_LIMIT_MS or
 * SCHEMA_WORK_MEMORY_MB (docs/delegation.md). The stub harness generates its values there too:
 * a pattern such as ^((a{1000}){1000}){100}$ asks for a string of 10^8 characters.
 */

/** Why a job in the worker ended without its answer; `pattern` is the one it was running, when known. */
type Unanswered =
  | { kind: "too_slow"; pattern: string | undefined }
  | { kind: "out_of_memory"; pattern: string | undefined }
  | { kind: "cancelled" }
  | { kind: "error"; message: string; unsent?: "too_deep" | "not_copyable" };

export type SchemaCheck = { kind: "checked"; violation: SchemaViolation | undefined } | Unanswered;

/** `too_large`: the value was generated in time, but its JSON text is `bytes` long, past the job's `maxBytes`. */
export type GeneratedInWorker = { kind: "generated"; value: unknown } | { kind: "too_large"; bytes: number } | Unanswered;

/** What the worker is asked to do: check a value, check a schema itself, or generate a value with json-schema-faker's options. */
type Work =
  | { kind: "check"; value: unknown; schema: Record<string, unknown> }
  | { kind: "problem"; schema: unknown }
  | { kind: "generate"; schema: Record<string, unknown>; options: Record<string, unknown>; maxBytes: number };

type Answer =
  | { id: number; type: "checked"; error: { path?: string; message?: string } | null }
  | { id: number; type: "generated"; value: unknown }
  | { id: number; type: "problem"; problem: string | null }
  | { id: number; type: "too_large"; bytes: number };

type WorkerMessage =
  | Answer
  | { id: number; type: "started" }
  | { id: number; type: "pattern"; number: number; source: string }
  | { id: number; type: "error"; message: string };

type Ended = { kind: "answered"; answer: Answer } | Unanswered;

interface Job {
  id: number;
  work: Work;
  limitMs: number;
  resolve(result: Ended): void;
}

export interface WorkerJobOptions {
  /** How long the job may run once started; SCHEMA_WORK_LIMIT_MS unless a test says otherwise. */
  limitMs?: number;
  /** The run's signal: a cancelled run's job leaves the queue, or ends the worker that runs it, at once. */
  signal?: AbortSignal;
  /** The checker to run on; the process's one unless a test gives its own. */
  checker?: SchemaWorker;
}

/**
 * One worker for every check, started with the first and kept while the process lives (a worker
 * each would cost a thread start per child of a large fan-out): checks run one at a time, each
 * with its own limit counted from when it starts. A check past its limit terminates the worker;
 * the checks queued behind it go to a new one.
 */
export class SchemaWorker {
  // worker, current, queue and pump are how a newer copy retires this one (retireOlderChecker): keep their names.
  private worker: Worker | null = null;
  /** Shared with the worker: the number (plus one) of the pattern it runs, 0 between patterns. */
  private running = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  private readonly queue: Job[] = [];
  /** The running job, with the patterns its worker has posted, by number. */
  private current: { job: Job; patterns: string[]; timer: NodeJS.Timeout | undefined } | null = null;
  private nextId = 0;
  /** Pattern texts the worker has sent the host, over every job (each is sent once per job that runs it). */
  readonly stats = { patternsPosted: 0 };

  private readonly memoryMb: number;

  constructor(memoryMb = SCHEMA_WORK_MEMORY_MB) {
    this.memoryMb = memoryMb;
  }

  run(work: Work, limitMs: number, signal?: AbortSignal): Promise<Ended> {
    if (signal?.aborted) return Promise.resolve({ kind: "cancelled" });
    return new Promise((resolve) => {
      const job: Job = { id: this.nextId++, work, limitMs, resolve };
      const cancel = () => this.cancel(job);
      signal?.addEventListener("abort", cancel, { once: true });
      job.resolve = (result) => {
        signal?.removeEventListener("abort", cancel);
        resolve(result);
      };
      this.queue.push(job);
      this.pump();
    });
  }

  /** A cancelled job leaves the queue; a running one ends its worker, as one past its limit does. */
  private cancel(job: Job): void {
    const queued = this.queue.indexOf(job);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      job.resolve({ kind: "cancelled" });
    } else this.stop(job, { kind: "cancelled" });
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
    this.current = { job, patterns: [], timer: undefined };
    try {
      worker.postMessage({ id: job.id, work: job.work });
    } catch (error) {
      // Copying a value thousands of levels deep overflows the host's stack: left running, the job
      // would never answer, and every job queued behind it on this one checker would wait for ever.
      const message = error instanceof Error ? error.message : String(error);
      // Only nesting overflows the copy of JSON data: V8 copies thousands of levels before it does.
      const unsent = error instanceof RangeError ? "too_deep" : "not_copyable";
      this.finish({ kind: "error", message: capText(`the schema or value could not be sent to the checking worker: ${message}`, MAX_WORKER_ERROR_CHARS), unsent });
    }
  }

  private started(): Worker {
    if (this.worker !== null) return this.worker;
    const running = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
    const worker = new Worker(new URL("./schema-worker-thread.js", import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: this.memoryMb },
      workerData: { running: running.buffer },
    });
    worker.on("message", (message: WorkerMessage) => this.onMessage(message));
    worker.on("error", (error) => {
      if (errorCode(error) === "ERR_WORKER_OUT_OF_MEMORY") this.lost(worker, { kind: "out_of_memory", pattern: this.runningPattern(running) });
      else this.lost(worker, { kind: "error", message: error.message });
    });
    worker.on("exit", (code) => this.lost(worker, { kind: "error", message: `the checking worker exited (code ${code}) before it answered` }));
    this.worker = worker;
    this.running = running;
    return worker;
  }

  private onMessage(message: WorkerMessage): void {
    const current = this.current;
    if (current === null || message.id !== current.job.id) return;
    if (message.type === "started") {
      // The limit counts from when the check starts, not while a busy host loads the worker.
      current.timer = setTimeout(() => this.stop(current.job, { kind: "too_slow", pattern: this.runningPattern(this.running) }), current.job.limitMs);
    } else if (message.type === "pattern") {
      current.patterns[message.number] = message.source;
      this.stats.patternsPosted++;
    }
    // The error may quote the schema whole (a regexp too large for the engine, at 300 KB).
    else if (message.type === "error") this.finish({ kind: "error", message: capText(message.message, MAX_WORKER_ERROR_CHARS) });
    else this.finish({ kind: "answered", answer: message });
  }

  /** The pattern the running job is in, or undefined when it is between patterns (in uniqueItems, say). */
  private runningPattern(running: Int32Array): string | undefined {
    const number = Atomics.load(running, 0);
    return number === 0 ? undefined : this.current?.patterns[number - 1];
  }

  /** The running job is past its limit (its worker is stuck in a pattern) or cancelled: its worker ends. */
  private stop(job: Job, why: Unanswered): void {
    const current = this.current;
    if (current === null || current.job !== job) return;
    const worker = this.worker;
    this.worker = null;
    this.finish(why);
    void worker?.terminate();
  }

  /** The worker failed, ran out of memory or exited on its own: the running job fails with why; queued ones go to a new worker. */
  private lost(worker: Worker, why: Unanswered): void {
    if (this.worker !== worker) return; // one this checker terminated
    this.worker = null;
    if (this.current !== null) this.finish(why);
  }

  private finish(result: Ended): void {
    const current = this.current;
    if (current === null) return;
    clearTimeout(current.timer);
    this.current = null;
    current.job.resolve(result);
    this.pump();
  }
}

/** The fields a checker of every shape so far keeps (SchemaWorker's and PatternChecker's): keep their names. */
interface OlderChecker {
  worker: Worker | null;
  current: unknown;
  queue: unknown[];
  pump(): void;
}

function isOlderChecker(store: unknown): store is OlderChecker {
  if (store === null || typeof store !== "object") return false;
  const fields = store as Partial<Record<keyof OlderChecker, unknown>>;
  return typeof fields.pump === "function" && Array.isArray(fields.queue) && "current" in fields && (fields.worker === null || fields.worker instanceof Worker);
}

/**
 * An older copy's checker after an upgrade and a reload: its thread would stay alive, idle and
 * unreachable for as long as the process lives. It is ended now if idle, else once its jobs are
 * answered; a run of the older copy still alive that checks again gets a thread ended the same way.
 */
function retireOlderChecker(store: unknown): void {
  if (!isOlderChecker(store)) return; // shape 1's first form started a thread per check, and kept none
  const endIfIdle = () => {
    if (store.current !== null || store.queue.length > 0 || store.worker === null) return;
    const thread = store.worker;
    store.worker = null; // its exit, then, is not taken for a lost job
    void thread.terminate();
  };
  const pump = store.pump;
  store.pump = () => {
    pump.call(store);
    endIfIdle();
  };
  endIfIdle();
}

/**
 * The shape of the process's checker (runtime/process-global.ts): 1 had check(value, schema,
 * limitMs) only; 2 has run(work, limitMs, signal); 3's thread also takes a "problem" job (a
 * thread of 2 answers one as a check of a value). A copy of another shape keeps its own.
 */
const CHECKER_SHAPE = 3;
const checker = processGlobal("pi-flow.pattern-checker", () => new SchemaWorker(), CHECKER_SHAPE, retireOlderChecker);

/** Checks `value` against `schema` in the checking worker; the host's event loop keeps turning meanwhile. */
export async function checkInWorker(value: unknown, schema: Record<string, unknown>, options: WorkerJobOptions = {}): Promise<SchemaCheck> {
  const ended = await (options.checker ?? checker).run({ kind: "check", value, schema }, options.limitMs ?? SCHEMA_WORK_LIMIT_MS, options.signal);
  if (ended.kind !== "answered") return ended;
  if (ended.answer.type !== "checked") return { kind: "error", message: "the checking worker answered a check with a generated value" };
  return { kind: "checked", violation: ended.answer.error === null ? undefined : violationOf(ended.answer.error) };
}

/**
 * A value json-schema-faker generates from `schema` with `options`, generated in the worker; the
 * host's event loop keeps turning meanwhile. One whose JSON text is longer than `maxBytes` stays
 * in the worker: only its size comes back.
 */
export async function generateInWorker(
  schema: Record<string, unknown>,
  fakerOptions: Record<string, unknown>,
  maxBytes: number,
  options: WorkerJobOptions = {},
): Promise<GeneratedInWorker> {
  const ended = await (options.checker ?? checker).run({ kind: "generate", schema, options: fakerOptions, maxBytes }, options.limitMs ?? SCHEMA_WORK_LIMIT_MS, options.signal);
  if (ended.kind !== "answered") return ended;
  if (ended.answer.type === "too_large") return { kind: "too_large", bytes: ended.answer.bytes };
  if (ended.answer.type !== "generated") return { kind: "error", message: "the checking worker answered a generation with a check" };
  return { kind: "generated", value: ended.answer.value };
}

export type SchemaProblemCheck = { kind: "checked"; problem: string | undefined } | Unanswered;

/**
 * Why `schema` cannot be an outputSchema (runtime/schema-check.ts's schemaProblem), found in the
 * worker: the host only copies the schema there, and does no walk of its own.
 */
export async function schemaProblemInWorker(schema: unknown, options: WorkerJobOptions = {}): Promise<SchemaProblemCheck> {
  const ended = await (options.checker ?? checker).run({ kind: "problem", schema }, options.limitMs ?? SCHEMA_WORK_LIMIT_MS, options.signal);
  if (ended.kind !== "answered") return ended;
  if (ended.answer.type !== "problem") return { kind: "error", message: "the checking worker answered a schema's check with something else" };
  return { kind: "checked", problem: ended.answer.problem ?? undefined };
}
