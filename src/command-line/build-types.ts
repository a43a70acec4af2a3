// `npm run build:types`: rewrites what is generated from the contract for workflow authors:
// helpers/contract-schemas.ts (agent()'s options and the run view readFinal() reads), then
// workflows/flow.d.ts (the declarations shipped beside the shipped workflows). Tests keep both
// equal to what this writes.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { contractSchemasModule } from "../contract/script-schemas.ts";

writeFileSync(fileURLToPath(new URL("../../helpers/contract-schemas.ts", import.meta.url)), contractSchemasModule());
// Loaded after the write, so the declarations are built from the schemas just written.
const { shippedDeclarations } = await import("../orchestrator/workflow/authoring-types.ts");
writeFileSync(fileURLToPath(new URL("../../workflows/flow.d.ts", import.meta.url)), await shippedDeclarations());
