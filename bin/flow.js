#!/usr/bin/env node
// The `flow` command's entry. Plain JavaScript, so it starts on any Node: it checks the version,
// teaches Node to strip pi-flow's own .ts files when pi-flow is installed under node_modules (see
// runtime/strip-own-types.js), then runs the command and exits with its code.
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(`flow needs Node >= 22.19 (this is ${process.version}). In a checkout of pi-flow, npx flow uses the Node that npm install put in node_modules.\n`);
  process.exit(1);
}

const { stripOwnTypes } = await import("../runtime/strip-own-types.js");
stripOwnTypes(new URL("../", import.meta.url).href);

const { main } = await import("../src/command-line/main.ts");
process.exit(await main(process.argv.slice(2)));
