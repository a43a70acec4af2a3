import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { inChildSessionContext } from "./harnesses/child-context.ts";
import { createHelpTool } from "./tools/help.ts";

/**
 * pi-flow's entry, named by the package manifest. Registration only: every behaviour lives in the
 * tool modules. Inside a child session that pi-flow itself is building, it installs nothing.
 */
export default function piFlow(pi: ExtensionAPI): void {
  if (inChildSessionContext()) return;
  pi.registerTool(createHelpTool({ registeredTools: () => pi.getAllTools().map((tool) => tool.name) }));
}
