// Runs, off the host's main thread (src/harnesses/schema-worker.ts), one at a time for as long as
// the host keeps it: checks of answers against outputSchemas and of args against meta.args, checks
// of outputSchemas themselves before a child is launched, and the stub harness's generation of
// values from outputSchemas. Plain JavaScript, so an installed pi-flow
// (under node_modules, where Node refuses to strip types) starts it with no loader. A pattern that
// backtracks catastrophically, a check that grows exponentially, or a schema that asks for a value
// too large to generate, blocks only this thread, which the host terminates; before each pattern
// runs for the first time in a job, its source is posted so the host can name it, and which one is running is kept in shared memory.
import { parentPort, workerData } from "node:worker_threads";
import { compile } from "@earendil-works/pi-schema";
import { generateSync } from "json-schema-faker";
import { schemaProblem } from "../../runtime/worker-js/schema-check.js";

const port = parentPort;
const test = RegExp.prototype.test;
// The running pattern's number plus one, 0 between patterns: a job stopped in uniqueItems after a
// pattern has finished must not blame that pattern. Shared memory, not a message: it changes twice
// per string checked, and a message per change copied a long pattern to the host each time.
const running = new Int32Array(workerData.running);
let job;
/** The current job's patterns by source, numbered in the order they first ran; each is posted once. */
const numbered = new Map();
RegExp.prototype.test = function testNamingItsPattern(input) {
  if (job === undefined) return test.call(this, input);
  const source = this.source;
  let number = numbered.get(source);
  if (number === undefined) {
    number = numbered.size;
    numbered.set(source, number);
    port.postMessage({ id: job, type: "pattern", number, source });
  }
  Atomics.store(running, 0, number + 1);
  try {
    return test.call(this, input);
  } finally {
    Atomics.store(running, 0, 0);
  }
};

/** The first error, as the validator gives it (the host makes it a violation), or null when the value fits. */
function firstError(schema, value) {
  const validator = compile(schema);
  if (validator.check(value)) return null;
  const first = validator.errors(value)[0];
  return { path: first?.path, message: first?.message };
}

function answer(id, work) {
  if (work.kind === "generate") {
    const value = generateSync(work.schema, work.options);
    // Measured here, so a value past the cap is never copied to the host.
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? "");
    return bytes > work.maxBytes ? { id, type: "too_large", bytes } : { id, type: "generated", value };
  }
  if (work.kind === "problem") return { id, type: "problem", problem: schemaProblem(work.schema, compile) ?? null };
  return { id, type: "checked", error: firstError(work.schema, work.value) };
}

port.on("message", ({ id, work }) => {
  job = id;
  numbered.clear();
  port.postMessage({ id, type: "started" });
  try {
    port.postMessage(answer(id, work));
  } catch (error) {
    port.postMessage({ id, type: "error", message: error instanceof Error ? error.message : String(error) });
  }
  job = undefined;
});
