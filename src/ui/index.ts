/**
 * Everything pi-flow draws for a person: the completion message and `/flow` output renderers and
 * the background runs widget. Tool rows are attached to the tool definitions; the `/flow` command
 * itself lives in src/commands/.
 * Nothing here changes what a tool returns or what the model reads.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { COMPLETION_MESSAGE_TYPE, COMPLETIONS_MESSAGE_TYPE, type FlowHost } from "../orchestrator/session/index.ts";
import { BackgroundRunsWidget } from "./background-widget.ts";
import { renderCompletionMessage, renderCompletionsMessage } from "./completion-message.ts";
import { FLOW_OUTPUT_TYPE, renderFlowOutput } from "./flow-output.ts";

export function installUi(pi: ExtensionAPI, host: FlowHost): BackgroundRunsWidget {
  pi.registerMessageRenderer(COMPLETION_MESSAGE_TYPE, renderCompletionMessage);
  pi.registerMessageRenderer(COMPLETIONS_MESSAGE_TYPE, renderCompletionsMessage);
  pi.registerEntryRenderer(FLOW_OUTPUT_TYPE, renderFlowOutput);
  return new BackgroundRunsWidget({ background: (ctx) => host.session(ctx).background, onBackgroundChange: (listener) => host.onBackgroundChange(listener) });
}

// What the tools and commands draw with.
export { argumentLines } from "./argument-lines.ts";
export { FLOW_OUTPUT_TYPE } from "./flow-output.ts";
export type { FlowOutput } from "./flow-output.ts";
export { counted, elapsedSince, formatCost, formatCount, formatDuration, formatSpend, formatUsageDetail, oneLine, runName, statusMark, statusOf, statusWord, terminalText } from "./format.ts";
export { helpRenderers, runsRenderers } from "./query-renderers.ts";
export { delegateRenderers, workflowRenderers } from "./run-renderers.ts";
export { childrenWorthShowing } from "./workflow-tree.ts";
