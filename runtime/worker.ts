// Worker entry: instantiates QuickJS once, then runs one VmSession per "run" message.
// The main thread terminates this worker whenever a run ends abnormally.
import { parentPort, workerData } from "node:worker_threads";
import { newQuickJSWASMModule, newVariant, RELEASE_SYNC, type QuickJSWASMModule } from "quickjs-emscripten";
import { isMainToWorker, type WorkerBoot, type WorkerToMain } from "./protocol.ts";
import { VmSession } from "./vm-session.ts";

const port = parentPort;
if (!port) throw new Error("runtime/worker.ts must run in a worker thread (started by worker-entry.js)");
const boot = workerData as WorkerBoot;
const post = (message: WorkerToMain): void => port.postMessage(message);

// QuickJS's WebAssembly build writes to the console when it aborts (a leak after an out-of-memory,
// say). The run already reports its failure; that text must not draw over Pi's screen. This
// worker's own code never logs.
for (const method of ["log", "info", "warn", "error", "debug"] as const) console[method] = () => undefined;

let module: QuickJSWASMModule | undefined;
let session: VmSession | undefined;

// Anything thrown here ends this worker, which the main thread reports as that run's sandbox failure.
port.on("message", (message: unknown) => {
  if (!isMainToWorker(message)) throw new Error("the workflow worker received a malformed message");
  if (message.type === "run") {
    if (!module) return post({ type: "done", outcome: { ok: false, error: { kind: "sandbox", message: "QuickJS is not loaded" } }, reusable: false });
    session = new VmSession(module, message, post);
    session.start(boot.prelude, boot.chunks);
  } else {
    session?.reply(message);
  }
});

// QuickJS's own limit (setMemoryLimit) ends a run only after its allocator has grown the
// WebAssembly memory far past it (a 64 MiB limit measured at ~2 GB of resident memory). The worker
// lives in the host's process, so its memory is capped: past the cap an allocation fails, and the
// run ends at its memory limit at once. The pool sizes the cap from the memoryBytes of the runs the
// worker serves.
const WASM_PAGE_BYTES = 64 * 1024;
// tsconfig's lib has no WebAssembly types; this is the one constructor used.
const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => object } }).WebAssembly;
const wasmMemory = new Memory({ initial: 256, maximum: Math.ceil(boot.wasmMaxBytes / WASM_PAGE_BYTES) });

try {
  module = await newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmModule: boot.wasmModule, wasmMemory: wasmMemory as never }));
  post({ type: "ready" });
} catch (error) {
  post({ type: "boot_error", message: error instanceof Error ? error.message : String(error) });
}
