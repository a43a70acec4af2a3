// `import flow from "pi-flow"` in plain Node: the Pi extension factory of index.ts (Pi itself loads
// index.ts through the package's "pi" manifest). Plain JavaScript, so it can first teach Node to
// strip pi-flow's own .ts files under node_modules (runtime/strip-own-types.js).
import { stripOwnTypes } from "./runtime/strip-own-types.js";

stripOwnTypes(new URL("./", import.meta.url).href);
const extension = await import("./index.ts");

export default extension.default;
