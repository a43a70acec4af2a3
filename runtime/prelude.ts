// The JavaScript that runs inside each VM before the script: it takes the single host function,
// hides it, and defines the script's globals and helpers on top of it. Everything it sends to
// the host is JSON text, so host code never touches a VM object. It runs in two steps: the
// prelude proper, the same for every run (an idle worker evaluates it ahead of its next run), and
// configure(), which installs one run's args, tools, clock and seed before the script starts.
import { HELPERS } from "../helpers/index.ts";
import { DISCOVERY } from "./prelude-discovery.ts";
import { SCRIPT_GLOBALS } from "./prelude-globals.ts";
import { HOST_CALLS } from "./prelude-host.ts";
import { JSON_BOUNDARY } from "./prelude-json.ts";
import { RUN_START } from "./prelude-start.ts";

const CORE = [HOST_CALLS, JSON_BOUNDARY, SCRIPT_GLOBALS, RUN_START].join("\n");

/** The prelude bindings a lazy chunk receives, in the order lazy() passes them. */
const CHUNK_PARAMETERS = "FlowError, stringify, parse, request";

/**
 * The source without indentation, blank lines or whole-line comments: the prelude is compiled in
 * every run. Safe because no prelude or helper source has a template literal or a multi-line string.
 */
function compact(source: string): string {
  // Trimming lines would change a template literal's text: refuse one rather than alter it.
  if (source.includes("`")) throw new Error("The workflow prelude may not contain template literals: compact() trims lines.");
  return source
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("//"))
    .join("\n");
}

/** One lazily compiled chunk: strict source of a function that returns the named definitions. */
function chunk(names: readonly string[], source: string): string {
  return `"use strict";(function (${CHUNK_PARAMETERS}) {\n${compact(source)}\nreturn { ${names.join(", ")} };\n})`;
}

export interface Prelude {
  /** Evaluated in every run's VM before the script. */
  source: string;
  /** Sources of the lazily compiled globals, by index: the VM asks for one on first use. */
  chunks: string[];
}

/**
 * The prelude: one IIFE holding the private bindings (FlowError, stringify, parse, request). The
 * helpers and discovery are registered as lazy chunks: compiled inside the VM on first use.
 */
export function buildPrelude(): Prelude {
  const lazyGlobals: Array<[names: string[], source: string]> = [
    [["describeTool", "searchTools"], DISCOVERY],
    ...HELPERS.map((helper): [string[], string] => [[helper.name], helper.source]),
  ];
  const registrations = lazyGlobals.map(([names], index) => `lazy(${JSON.stringify(names)}, "${index}");`);
  return {
    source: `(function (g) {\n"use strict";\n${compact(CORE)}\n${registrations.join("\n")}\n})(globalThis);\n`,
    chunks: lazyGlobals.map(([names, source]) => chunk(names, source)),
  };
}
