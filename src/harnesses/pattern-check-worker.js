// Checks one structured answer against an outputSchema that holds a `pattern` or
// `patternProperties`, off the host's main thread (src/harnesses/pattern-check.ts). Plain
// JavaScript, so an installed pi-flow (under node_modules, where Node refuses to strip types)
// starts it with no loader. A pattern that backtracks catastrophically blocks only this thread,
// which the host terminates; before each pattern runs, its source is posted so the host can name it.
import { parentPort, workerData } from "node:worker_threads";
import { compile } from "@earendil-works/pi-schema";

const port = parentPort;
const { schema, value } = workerData;
const test = RegExp.prototype.test;
let running;
RegExp.prototype.test = function testNamingItsPattern(input) {
  if (this.source !== running) {
    running = this.source;
    port.postMessage({ type: "pattern", source: running });
  }
  return test.call(this, input);
};

function firstViolation() {
  const validator = compile(schema);
  if (validator.check(value)) return undefined;
  const first = validator.errors(value)[0];
  const path = first?.path ?? "";
  return { pointer: path === "" || path.startsWith("/") ? path : `/${path}`, message: first?.message ?? "does not match the schema" };
}

port.postMessage({ type: "started" });
try {
  port.postMessage({ type: "checked", violation: firstViolation() });
} catch (error) {
  port.postMessage({ type: "error", message: error instanceof Error ? error.message : String(error) });
}
