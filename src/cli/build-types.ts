// `npm run build:types`: rewrites workflows/flow.d.ts, the declarations shipped beside the shipped
// workflows. A test keeps the file equal to what this writes.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { shippedDeclarations } from "../orchestrator/authoring-types.ts";
import { SHIPPED_WORKFLOWS_DIR } from "../orchestrator/workflow-sources.ts";

writeFileSync(join(SHIPPED_WORKFLOWS_DIR, "flow.d.ts"), await shippedDeclarations());
