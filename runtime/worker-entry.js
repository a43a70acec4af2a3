// The workflow worker's entry. Plain JavaScript on purpose: Node refuses to strip types from .ts
// files under node_modules, which is where an installed pi-flow lives (and Pi's own loader only
// serves the main thread). There, this entry first teaches the worker's module loader to strip
// pi-flow's own .ts files; elsewhere Node strips them itself. Then it starts the real worker.
import { readFileSync } from "node:fs";
import { registerHooks, stripTypeScriptTypes } from "node:module";

const packageRoot = new URL("../", import.meta.url).href;

if (packageRoot.includes("/node_modules/")) {
  registerHooks({
    load(url, context, nextLoad) {
      if (!url.startsWith(packageRoot) || !url.endsWith(".ts")) return nextLoad(url, context);
      const source = readFileSync(new URL(url), "utf8");
      return { format: "module", source: stripTypeScriptTypes(source), shortCircuit: true };
    },
  });
}

await import("./worker.ts");
