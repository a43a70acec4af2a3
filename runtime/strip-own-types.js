// Plain JavaScript on purpose: Node refuses to strip types from .ts files under node_modules, which
// is where an installed pi-flow lives (and Pi's own loader only serves Pi's main thread). An entry
// point (the workflow worker's, the flow command's) calls this first, so Node's module loader
// strips pi-flow's own .ts files itself; in a checkout Node strips them and this does nothing.
import { readFileSync } from "node:fs";
import { registerHooks, stripTypeScriptTypes } from "node:module";

/** `packageRoot`: the URL of pi-flow's root folder, ending in "/". */
export function stripOwnTypes(packageRoot) {
  if (!packageRoot.includes("/node_modules/")) return;
  // Node warns once per thread that stripTypeScriptTypes is experimental: how this works, not news to a user.
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning, ...rest) => {
    const message = typeof warning === "string" ? warning : warning?.message;
    if (typeof message === "string" && message.startsWith("stripTypeScriptTypes")) return;
    emitWarning.call(process, warning, ...rest);
  };
  const dependencies = `${packageRoot}node_modules/`;
  registerHooks({
    load(url, context, nextLoad) {
      if (!url.startsWith(packageRoot) || url.startsWith(dependencies) || !url.endsWith(".ts")) return nextLoad(url, context);
      const source = readFileSync(new URL(url), "utf8");
      return { format: "module", source: stripTypeScriptTypes(source), shortCircuit: true };
    },
  });
}
