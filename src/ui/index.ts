/**
 * Everything pi-flow draws for a person: the completion message and `/flow` output renderers, the
 * background runs widget and the `/flow` command. Tool rows are attached to the tool definitions.
 * Nothing here changes what a tool returns or what the model reads.
 */
import { getAgentDir, type ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { COMPLETION_MESSAGE_TYPE, COMPLETIONS_MESSAGE_TYPE, type FlowHost } from "../orchestrator/flow-host.ts";
import type { HelpSources } from "../tools/help.ts";
import { BackgroundRunsWidget } from "./background-widget.ts";
import { renderCompletionMessage, renderCompletionsMessage } from "./completion-message.ts";
import { registerFlowCommand } from "./flow-command.ts";
import { FLOW_OUTPUT_TYPE, renderFlowOutput } from "./flow-output.ts";

export function installUi(pi: ExtensionAPI, host: FlowHost, help: HelpSources): BackgroundRunsWidget {
  pi.registerMessageRenderer(COMPLETION_MESSAGE_TYPE, renderCompletionMessage);
  pi.registerMessageRenderer(COMPLETIONS_MESSAGE_TYPE, renderCompletionsMessage);
  pi.registerEntryRenderer(FLOW_OUTPUT_TYPE, renderFlowOutput);
  registerFlowCommand(pi, {
    runStore: (ctx) => host.runStore(ctx),
    flowHome: () => host.flowHome(),
    agentDir: getAgentDir,
    harnessState: (name, cwd) => host.harnessState(name, cwd),
    projectTrusted: (ctx) => host.projectTrusted(ctx),
    backend: () => host.backendLine(),
    workers: () => host.workersLine(),
    help,
  });
  return new BackgroundRunsWidget({ background: (ctx) => host.session(ctx).background, onBackgroundChange: (listener) => host.onBackgroundChange(listener) });
}
