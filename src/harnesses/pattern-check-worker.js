// Checks structured answers against outputSchemas that hold a `pattern` or `patternProperties`,
// off the host's main thread (src/harnesses/pattern-check.ts), one at a time, for as long as the
// host keeps it. Plain JavaScript, so an installed pi-flow (under node_modules, where Node refuses
// to strip types) starts it with no loader. A pattern that backtracks catastrophically blocks only
// this thread, which the host terminates; before each pattern runs, its source is posted so the
// host can name it.
import { parentPort } from "node:worker_threads";
import { compile } from "@earendil-works/pi-schema";

const port = parentPort;
const test = RegExp.prototype.test;
let job;
let running;
RegExp.prototype.test = function testNamingItsPattern(input) {
  if (job !== undefined && this.source !== running) {
    running = this.source;
    port.postMessage({ id: job, type: "pattern", source: running });
  }
  return test.call(this, input);
};

/** The first error, as the validator gives it (the host makes it a violation), or null when the value fits. */
function firstError(schema, value) {
  const validator = compile(schema);
  if (validator.check(value)) return null;
  const first = validator.errors(value)[0];
  return { path: first?.path, message: first?.message };
}

port.on("message", ({ id, schema, value }) => {
  job = id;
  running = undefined;
  port.postMessage({ id, type: "started" });
  try {
    port.postMessage({ id, type: "checked", error: firstError(schema, value) });
  } catch (error) {
    port.postMessage({ id, type: "error", message: error instanceof Error ? error.message : String(error) });
  }
  job = undefined;
});
