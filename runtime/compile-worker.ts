// Compiles the workflow worker's modules to plain JavaScript in runtime/worker-js/, so a worker
// never strips TypeScript types when it starts (Node would repeat that in every new worker; under
// node_modules it would need a loader hook). Run `npm run build:worker` after changing any of
// them; test/runtime/compiled-worker.test.ts fails while the committed output differs.
import { readFileSync, writeFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { fileURLToPath } from "node:url";

/**
 * The modules worker threads load: the workflow worker's graph (runtime/worker.ts and everything it
 * imports at run time), and the schema checks the schema worker runs (src/harnesses/schema-worker-thread.js).
 */
export const WORKER_MODULES = ["worker", "protocol", "vm-session", "cpu-meter", "vm-prepared", "vm-output", "vm-store", "vm-heap", "vm-malloc", "vm-checks", "vm-script", "vm-failure", "json", "limits", "text", "schema-check", "schema-cycles"] as const;

const runtimeDir = new URL("./", import.meta.url);
export const COMPILED_DIR = new URL("./worker-js/", runtimeDir);

/** The compiled text of one module: types stripped, relative `.ts` imports pointed at `.js`. */
export function compileModule(name: string): string {
  const source = readFileSync(new URL(`${name}.ts`, runtimeDir), "utf8");
  const stripped = stripTypeScriptTypes(source, { mode: "strip" });
  const js = stripped.replace(/(from\s+["']\.\/[\w-]+)\.ts(["'])/g, "$1.js$2");
  for (const match of js.matchAll(/from\s+["'](\.\/[\w-]+)\.js["']/g)) {
    const imported = match[1]!.slice(2);
    if (!(WORKER_MODULES as readonly string[]).includes(imported))
      throw new Error(`runtime/${name}.ts imports ./${imported}.ts, which is not in WORKER_MODULES`);
  }
  return `// Generated from runtime/${name}.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.\n${js}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const name of WORKER_MODULES) writeFileSync(new URL(`${name}.js`, COMPILED_DIR), compileModule(name));
  console.log(`compiled ${WORKER_MODULES.length} worker modules to runtime/worker-js/`);
}
