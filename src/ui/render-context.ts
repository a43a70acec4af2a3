import type { ToolRenderers } from "@earendil-works/pi-coding-agent";

/** The context Pi passes to a tool's renderers (Pi 1.6 exports the renderers, not this type). */
export type RenderContext = Parameters<NonNullable<ToolRenderers["renderCall"]>>[2];
