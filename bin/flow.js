#!/usr/bin/env node
// The `flow` command's entry. Plain JavaScript on purpose: Node refuses to strip types from .ts
// files under node_modules, which is where an installed pi-flow lives. There, this entry first
// teaches Node's module loader to strip pi-flow's own .ts files (as runtime/worker-entry.js does
// for the workflow worker); in a checkout Node strips them itself. Then it runs the command.
import { readFileSync } from "node:fs";
import { registerHooks, stripTypeScriptTypes } from "node:module";

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(`flow needs Node >= 22.19 (this is ${process.version}). In a checkout of pi-flow, npx flow uses the Node that npm install put in node_modules.\n`);
  process.exit(1);
}

const packageRoot = new URL("../", import.meta.url).href;

if (packageRoot.includes("/node_modules/")) {
  registerHooks({
    load(url, context, nextLoad) {
      if (!url.startsWith(packageRoot) || !url.endsWith(".ts") || url.startsWith(`${packageRoot}node_modules/`)) return nextLoad(url, context);
      const source = readFileSync(new URL(url), "utf8");
      return { format: "module", source: stripTypeScriptTypes(source), shortCircuit: true };
    },
  });
}

const { main } = await import("../src/cli/main.ts");
process.exit(await main(process.argv.slice(2)));
