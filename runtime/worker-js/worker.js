// Generated from runtime/worker.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// Worker entry: instantiates QuickJS once, then runs one VmSession per "run" message.
// The main thread terminates this worker whenever a run ends abnormally.
//
// Between runs the worker prepares the VM its next run will use (a new runtime and context with
// the run-independent prelude evaluated, vm-prepared.ts), so a run on an idle worker starts
// without compiling the prelude. Each prepared VM serves one run and is disposed with it.
import { parentPort, workerData } from "node:worker_threads";
import { newQuickJSWASMModule, newVariant, RELEASE_SYNC,                        } from "quickjs-emscripten";
import { isMainToWorker,                                                                       } from "./protocol.js";
import { PreparedVm } from "./vm-prepared.js";
import { VmSession } from "./vm-session.js";

const port = parentPort;
if (!port) throw new Error("runtime/worker.ts must run in a worker thread (started by worker-entry.js)");
const boot = workerData              ;
/**
 * Calls the VM makes in one turn (a parallel() of many agent() calls) leave as one message when
 * the turn ends; any other message first sends the calls before it, so the host reads all in order.
 */
let calls                = [];
function sendCalls()       {
  if (calls.length === 0) return;
  const batch = calls;
  calls = [];
  port .postMessage(batch.length === 1 ? batch[0] : { type: "calls", calls: batch });
}
const post = (message              )       => {
  if (message.type === "call") {
    calls.push(message);
    if (calls.length === 1) queueMicrotask(sendCalls);
    return;
  }
  sendCalls();
  port.postMessage(message);
};

// QuickJS's WebAssembly build writes to the console when it aborts (a leak after an out-of-memory,
// say). The run already reports its failure; that text must not draw over Pi's screen. This
// worker's own code never logs.
for (const method of ["log", "info", "warn", "error", "debug"]         ) console[method] = () => undefined;

let module                               ;
let session                       ;
/** The VM the next run starts on, if this worker has prepared it. */
let next                        ;

/**
 * Prepares the next run's VM while the worker is idle. Posts "prepared" either way, after the
 * "done" of the run before (the pool reads the two in order). A failed preparation is not fatal:
 * the next run prepares its VM itself, as a worker that was not idle long enough does.
 */
function prepareAhead()       {
  if (!module || next || (session && !session.ended)) return;
  try {
    next = PreparedVm.prepare(module, boot.prelude);
    post({ type: "prepared", ok: true });
  } catch {
    post({ type: "prepared", ok: false });
  }
}

/** Deferred, so the message just posted ("ready" or "done") leaves before the preparation runs. */
const prepareSoon = ()       => void setImmediate(prepareAhead);

function startRun(message            , quickjs                   )       {
  let vm = next;
  next = undefined;
  if (!vm) {
    try {
      vm = PreparedVm.prepare(quickjs, boot.prelude);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return post({ type: "done", outcome: { ok: false, error: { kind: "sandbox", message: `the workflow VM could not be prepared: ${reason}` } }, reusable: false });
    }
  }
  session = new VmSession(vm, message, (out) => {
    post(out);
    if (out.type === "done" && out.reusable) prepareSoon();
  });
  session.start(boot.chunks);
}

// Anything thrown here ends this worker, which the main thread reports as that run's sandbox failure.
port.on("message", (message         ) => {
  if (!isMainToWorker(message)) throw new Error("the workflow worker received a malformed message");
  if (message.type === "run") {
    if (!module) return post({ type: "done", outcome: { ok: false, error: { kind: "sandbox", message: "QuickJS is not loaded" } }, reusable: false });
    startRun(message, module);
  } else if (message.type === "stop") {
    session?.halt();
    post({ type: "stopped" });
  } else {
    session?.reply(message.type === "replies" ? message.replies : [message]);
  }
});

// QuickJS's own limit (setMemoryLimit) ends a run only after its allocator has grown the
// WebAssembly memory far past it (a 64 MiB limit measured at ~2 GB of resident memory). The worker
// lives in the host's process, so its memory is capped: past the cap an allocation fails, and the
// run ends at its memory limit at once. The pool sizes the cap from the memoryBytes of the runs the
// worker serves.
const WASM_PAGE_BYTES = 64 * 1024;
// tsconfig's lib has no WebAssembly types; this is the one constructor used.
const { Memory } = (globalThis                                                                                                            ).WebAssembly;
const wasmMemory = new Memory({ initial: 256, maximum: Math.ceil(boot.wasmMaxBytes / WASM_PAGE_BYTES) });

try {
  module = await newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmModule: boot.wasmModule, wasmMemory: wasmMemory          }));
  post({ type: "ready" });
  prepareSoon();
} catch (error) {
  post({ type: "boot_error", message: error instanceof Error ? error.message : String(error) });
}
