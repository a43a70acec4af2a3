// Worker threads with QuickJS already instantiated. Starting a worker costs tens of milliseconds,
// so a finished worker that ended cleanly is kept for the next run (each run still gets a fresh
// QuickJS runtime), and one spare is warmed in the background. Idle workers never keep the
// process alive.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { buildPrelude } from "./prelude.ts";
import { DEFAULT_LIMITS, wasmMemoryCap } from "./limits.ts";
import type { WorkerBoot, WorkerToMain } from "./protocol.ts";

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
}

/**
 * Pooled workers serve runs up to the default memoryBytes; a run that asks for more gets a worker
 * of its own, sized for it, which is never pooled. So no default run can make the host hold more
 * than this cap of WebAssembly memory.
 */
const POOLED_WASM_CAP = wasmMemoryCap(DEFAULT_LIMITS.memoryBytes);

// tsconfig's lib has no WebAssembly types; this is the one call used.
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<object> } }).WebAssembly;

const options: PoolOptions = { maxIdle: 2, spare: 1, maxRunsPerWorker: 100 };
const idle: PooledWorker[] = [];
let warming = 0;
/** What every worker starts from; each worker adds its own memory cap. */
type SharedBoot = Omit<WorkerBoot, "wasmMaxBytes">;
let boot: Promise<SharedBoot> | undefined;

function loadBoot(): Promise<SharedBoot> {
  boot ??= (async () => {
    // The WASM file belongs to quickjs-emscripten's own dependency: resolve it from there.
    const fromHere = createRequire(import.meta.url);
    const fromQuickJS = createRequire(fromHere.resolve("quickjs-emscripten"));
    const bytes = await readFile(fromQuickJS.resolve("@jitl/quickjs-wasmfile-release-sync/wasm"));
    const prelude = buildPrelude();
    return { wasmModule: await wasm.compile(bytes), prelude: prelude.source, chunks: prelude.chunks };
  })();
  boot.catch(() => {
    boot = undefined;
  });
  return boot;
}

async function spawn(wasmMaxBytes = POOLED_WASM_CAP): Promise<PooledWorker> {
  const data = await loadBoot();
  const worker = new Worker(new URL("./worker-entry.js", import.meta.url), {
    workerData: { ...data, wasmMaxBytes } satisfies WorkerBoot,
    resourceLimits: { stackSizeMb: WORKER_STACK_MB, maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  worker.unref();
  const pooled: PooledWorker = { worker, runs: 0, wasmMaxBytes };
  // A worker that dies while idle leaves the pool.
  worker.once("exit", () => {
    const at = idle.indexOf(pooled);
    if (at >= 0) idle.splice(at, 1);
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
  return pooled;
}

function topUp(): void {
  while (idle.length + warming < options.spare) {
    warming++;
    spawn()
      .then((pooled) => {
        if (idle.length < options.maxIdle) idle.push(pooled);
        else void pooled.worker.terminate();
      })
      .catch(() => {})
      .finally(() => {
        warming--;
      });
  }
}

/** A ready worker for a run of `memoryBytes`, held (ref'd) for that run. */
export async function acquireWorker(memoryBytes = DEFAULT_LIMITS.memoryBytes): Promise<PooledWorker> {
  const needed = wasmMemoryCap(memoryBytes);
  const pooled = needed <= POOLED_WASM_CAP ? (idle.pop() ?? (await spawn())) : await spawn(needed);
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

/** Terminates idle workers; later runs start fresh ones. */
export async function shutdownWorkflowWorkers(): Promise<void> {
  const workers = idle.splice(0, idle.length);
  await Promise.all(workers.map((pooled) => pooled.worker.terminate()));
}

export function configureWorkflowWorkers(next: Partial<PoolOptions>): PoolOptions {
  Object.assign(options, next);
  return { ...options };
}
