// Process-wide state is named: every store that outlives an extension reload is made through
// processGlobal under a listed key, so a reloaded copy of pi-flow finds the very same store.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { processGlobal, PROCESS_GLOBALS } from "../../runtime/process-global.ts";
import { processRegistry } from "../../src/runs/index.ts";
import { importGraph } from "../support/import-graph.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

const sources = [...importGraph(["src", "runtime"]).keys()].map((file) => ({ file, text: readFileSync(join(PROJECT_ROOT, file), "utf8") }));

describe("process-wide stores", () => {
  it("are made only by processGlobal, each listed key by exactly one module", () => {
    expect(sources.filter(({ file, text }) => file !== "runtime/process-global.ts" && /Symbol\.for\(|globalThis\s+as\s+\{\s*\[/.test(text)).map(({ file }) => file)).toEqual([]);
    const makers = Object.keys(PROCESS_GLOBALS).map((key) => [key, sources.filter(({ text }) => text.includes(`processGlobal("${key}"`)).length]);
    expect(makers).toEqual(Object.keys(PROCESS_GLOBALS).map((key) => [key, 1]));
  });

  it("hand every copy of pi-flow the same value, made once, under the key an earlier copy used", () => {
    const registry = processRegistry();
    let made = 0;
    expect(processGlobal("pi-flow.runs.registry", () => made++)).toBe(registry);
    expect(made).toBe(0);
    expect((globalThis as { [key: symbol]: unknown })[Symbol.for("pi-flow.runs.registry")]).toBe(registry);
  });
});
