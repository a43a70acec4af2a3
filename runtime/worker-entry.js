// The workflow worker's entry: teaches the worker's module loader to strip pi-flow's own .ts files
// when pi-flow is installed under node_modules (see strip-own-types.js), then starts the worker.
import { stripOwnTypes } from "./strip-own-types.js";

stripOwnTypes(new URL("../", import.meta.url).href);

await import("./worker.ts");
