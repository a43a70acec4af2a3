import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COMPILED_DIR, compileModule, WORKER_MODULES } from "../../runtime/compile-worker.ts";
import { run, value } from "./support.ts";

describe("the precompiled worker", () => {
  it("is exactly what its TypeScript sources compile to (run npm run build:worker after changing them)", () => {
    for (const name of WORKER_MODULES) expect(readFileSync(new URL(`${name}.js`, COMPILED_DIR), "utf8"), name).toBe(compileModule(name));
    expect(readdirSync(COMPILED_DIR).sort()).toEqual(WORKER_MODULES.map((name) => `${name}.js`).sort());
  });

  it("loads no TypeScript: the worker entry imports only the compiled modules", async () => {
    const entry = readFileSync(new URL("../../runtime/worker-entry.js", import.meta.url), "utf8");
    expect(entry).not.toMatch(/\.ts["']/);
    for (const name of WORKER_MODULES) expect(compileModule(name)).not.toMatch(/from\s+["'][^"']+\.ts["']/);
    expect(value((await run("return 1 + 1;")).result)).toBe(2);
  });
});
