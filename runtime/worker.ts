// Worker entry: instantiates QuickJS once, then runs one VmSession per "run" message.
// The main thread terminates this worker whenever a run ends abnormally.
import { parentPort, workerData } from "node:worker_threads";
import { newQuickJSWASMModule, newVariant, RELEASE_SYNC, type QuickJSWASMModule } from "quickjs-emscripten";
import type { MainToWorker, WorkerBoot, WorkerToMain } from "./protocol.ts";
import { VmSession } from "./vm-session.ts";

const port = parentPort;
if (!port) throw new Error("runtime/worker.ts must run in a worker thread (started by worker-entry.js)");
const boot = workerData as WorkerBoot;
const post = (message: WorkerToMain): void => port.postMessage(message);

let module: QuickJSWASMModule | undefined;
let session: VmSession | undefined;

port.on("message", (message: MainToWorker) => {
  if (message.type === "run") {
    if (!module) return post({ type: "done", outcome: { ok: false, error: { kind: "sandbox", message: "QuickJS is not loaded" } }, reusable: false });
    session = new VmSession(module, message, post);
    session.start(boot.prelude);
  } else {
    session?.reply(message);
  }
});

try {
  module = await newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmModule: boot.wasmModule }));
  post({ type: "ready" });
} catch (error) {
  post({ type: "boot_error", message: error instanceof Error ? error.message : String(error) });
}
