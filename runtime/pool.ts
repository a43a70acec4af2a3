// Worker threads with QuickJS already instantiated. Starting a worker costs tens of milliseconds,
// so a finished worker that ended cleanly is kept for the next run (each run still gets a fresh
// QuickJS runtime), and one spare is warmed in the background. Idle workers never keep the
// process alive. An idle worker prepares the VM of its next run (worker.ts), so each holds one
// prepared VM (a few hundred KB of its WebAssembly memory) and maxIdle bounds how many exist.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { buildPrelude } from "./prelude.ts";
import { DEFAULT_LIMITS, wasmMemoryCap } from "./limits.ts";
import type { WorkerBoot, WorkerToMain } from "./protocol.ts";
import { processGlobal } from "./process-global.ts";

/** Native stack of a worker: QuickJS frames need about twice their stackBytes of it (see limits.ts). */
const WORKER_STACK_MB = 16;
/** V8 heap of a worker (not the VM's, which is memoryBytes inside WASM memory). */
const WORKER_HEAP_MB = 256;

export interface PoolOptions {
  /** Finished workers kept for reuse. */
  maxIdle: number;
  /** Workers kept warm ahead of demand once the pool has been used. */
  spare: number;
  /** A worker retires after this many runs (WASM memory never shrinks). */
  maxRunsPerWorker: number;
}

export interface PooledWorker {
  worker: Worker;
  runs: number;
  /** The worker's WebAssembly memory cap: only runs whose memoryBytes fit under it may use it. */
  wasmMaxBytes: number;
  /** The VM of the worker's next run, as its last messages tell: see worker.ts. */
  nextVm: "preparing" | "ready" | "none";
}

/**
 * Pooled workers serve runs up to the default memoryBytes; a run that asks for more gets a worker
 * of its own, sized for it, which is never pooled. So no default run can make the host hold more
 * than this cap of WebAssembly memory.
 */
const POOLED_WASM_CAP = wasmMemoryCap(DEFAULT_LIMITS.memoryBytes);

// tsconfig's lib has no WebAssembly types; this is the one call used.
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<object> } }).WebAssembly;

/** What every worker starts from; each worker adds its own memory cap. */
type SharedBoot = Omit<WorkerBoot, "wasmMaxBytes">;

interface PoolState {
  options: PoolOptions;
  idle: PooledWorker[];
  warming: number;
  /** Waiting for every idle worker to have prepared its next VM (idleWorkersPrepared). */
  preparedWaiters: Array<() => void>;
  boot: Promise<SharedBoot> | undefined;
}

/**
 * The workers' code and the prelude they boot with, as bytes: the runtime's and the helpers'
 * sources. Copies of pi-flow with the same bytes can share workers; an edited or upgraded copy
 * (the same version number or not) cannot.
 */
function codeIdentity(): string {
  const hash = createHash("sha256");
  for (const folder of ["./", "./worker-js/", "../helpers/"]) {
    const url = new URL(folder, import.meta.url);
    for (const name of readdirSync(url).sort()) {
      if (/\.(ts|js|mjs)$/.test(name)) hash.update(`${folder}${name}\0`).update(readFileSync(new URL(name, url)));
    }
  }
  return hash.digest("hex");
}

/**
 * One pool per process and worker code: every copy of this module (Pi loads the extension afresh
 * on each reload) with the same code shares it, so the idle workers of an earlier copy are reused,
 * not left running where nothing can reach them. A copy whose code differs has workers of its own.
 */
const pool: PoolState = (() => {
  const byCode = processGlobal("pi-flow.workflow-workers", () => new Map<string, PoolState>());
  const code = codeIdentity();
  let state = byCode.get(code);
  if (!state) byCode.set(code, (state = { options: { maxIdle: 2, spare: 1, maxRunsPerWorker: 100 }, idle: [], warming: 0, preparedWaiters: [], boot: undefined }));
  return state;
})();
const { options, idle } = pool;

function loadBoot(): Promise<SharedBoot> {
  pool.boot ??= (async () => {
    // The WASM file belongs to quickjs-emscripten's own dependency: resolve it from there.
    const fromHere = createRequire(import.meta.url);
    const fromQuickJS = createRequire(fromHere.resolve("quickjs-emscripten"));
    const bytes = await readFile(fromQuickJS.resolve("@jitl/quickjs-wasmfile-release-sync/wasm"));
    const prelude = buildPrelude();
    return { wasmModule: await wasm.compile(bytes), prelude: prelude.source, chunks: prelude.chunks };
  })();
  const boot = pool.boot;
  boot.catch(() => {
    if (pool.boot === boot) pool.boot = undefined;
  });
  return boot;
}

async function spawn(wasmMaxBytes = POOLED_WASM_CAP): Promise<PooledWorker> {
  const data = await loadBoot();
  const worker = new Worker(new URL("./worker-entry.js", import.meta.url), {
    workerData: { ...data, wasmMaxBytes } satisfies WorkerBoot,
    resourceLimits: { stackSizeMb: WORKER_STACK_MB, maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  const pooled: PooledWorker = { worker, runs: 0, wasmMaxBytes, nextVm: "preparing" };
  // A worker that dies while idle leaves the pool.
  worker.once("exit", () => {
    const at = idle.indexOf(pooled);
    if (at >= 0) idle.splice(at, 1);
    notifyPrepared();
  });
  // The worker prepares a VM after "ready" and after each reusable "done", then says "prepared";
  // the port keeps them in order, so the last one read tells whether it is still preparing.
  worker.on("message", (message: unknown) => {
    const type = message !== null && typeof message === "object" ? (message as { type?: unknown }).type : undefined;
    if (type === "done") pooled.nextVm = (message as { reusable?: unknown }).reusable === true ? "preparing" : "none";
    else if (type === "prepared") pooled.nextVm = (message as { ok?: unknown }).ok === true ? "ready" : "none";
    else return;
    notifyPrepared();
  });
  await new Promise<void>((resolve, reject) => {
    const onMessage = (message: WorkerToMain) => {
      if (message.type === "ready") done(undefined);
      else if (message.type === "boot_error") done(new Error(`QuickJS failed to load: ${message.message}`));
    };
    const onError = (error: Error) => done(error);
    const onExit = (code: number) => done(new Error(`workflow worker exited during startup (code ${code})`));
    const done = (error: Error | undefined) => {
      worker.off("message", onMessage).off("error", onError).off("exit", onExit);
      if (error) {
        void worker.terminate();
        reject(error);
      } else resolve();
    };
    worker.on("message", onMessage).on("error", onError).on("exit", onExit);
  });
  // Ref'd while it starts, as its caller awaits it; idle from here on. unref() also unrefs the
  // worker's port, which the "message" listener above holds ref'd.
  worker.unref();
  return pooled;
}

function topUp(): void {
  while (idle.length + pool.warming < options.spare) {
    pool.warming++;
    spawn()
      .then((pooled) => {
        if (idle.length < options.maxIdle) idle.push(pooled);
        else void pooled.worker.terminate();
      })
      .catch(() => {})
      .finally(() => {
        pool.warming--;
      });
  }
}

function notifyPrepared(): void {
  if (idle.some((pooled) => pooled.nextVm === "preparing")) return;
  const waiters = pool.preparedWaiters;
  pool.preparedWaiters = [];
  for (const resolve of waiters) resolve();
}

/**
 * Resolves once no idle worker is still preparing its next VM (prepared, or failed to). For
 * measurements and tests that must start a run on a prepared VM; runs never need to wait for it.
 */
export function idleWorkersPrepared(): Promise<void> {
  // Idle workers are unref'd, so their "prepared" alone would not keep the process alive to hear
  // it: a timer that never fires does, until the wait is over.
  const keepAlive = setInterval(() => undefined, 2 ** 30);
  return new Promise<void>((resolve) => {
    pool.preparedWaiters.push(resolve);
    notifyPrepared();
  }).finally(() => clearInterval(keepAlive));
}

/** A ready worker for a run of `memoryBytes`, held (ref'd) for that run. */
export async function acquireWorker(memoryBytes = DEFAULT_LIMITS.memoryBytes): Promise<PooledWorker> {
  const needed = wasmMemoryCap(memoryBytes);
  // The worker idle longest, not the one that just finished: its next VM is the most likely to be
  // prepared already, while the newest one may still be preparing (a run then waits for that).
  const pooled = needed <= POOLED_WASM_CAP ? (idle.shift() ?? (await spawn())) : await spawn(needed);
  pooled.worker.ref();
  pooled.runs++;
  topUp();
  return pooled;
}

/** Returns a worker after a run; only clean endings are reused, anything else is terminated. */
export function releaseWorker(pooled: PooledWorker, reusable: boolean): void {
  pooled.worker.unref();
  if (reusable && pooled.wasmMaxBytes === POOLED_WASM_CAP && pooled.runs < options.maxRunsPerWorker && idle.length < options.maxIdle) {
    idle.push(pooled);
  } else {
    void pooled.worker.terminate();
  }
}

/** Starts workers ahead of demand, e.g. when the host loads. */
export async function prewarmWorkflowWorkers(count = 1): Promise<void> {
  const wanted = Math.max(0, Math.min(count, options.maxIdle) - idle.length);
  const started = await Promise.all(Array.from({ length: wanted }, () => spawn()));
  idle.push(...started);
}

/** The idle workers' thread IDs, in the order acquireWorker takes them (oldest first). For tests and diagnostics. */
export function idleWorkerThreads(): number[] {
  return idle.map((pooled) => pooled.worker.threadId);
}

/** Terminates idle workers; later runs start fresh ones. */
export async function shutdownWorkflowWorkers(): Promise<void> {
  const workers = idle.splice(0, idle.length);
  notifyPrepared();
  await Promise.all(workers.map((pooled) => pooled.worker.terminate()));
}

export function configureWorkflowWorkers(next: Partial<PoolOptions>): PoolOptions {
  Object.assign(options, next);
  return { ...options };
}
