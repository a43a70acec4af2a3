// The `/flow` command family, a person's front door beside the model's tools: it reads this
// session's runs, catalog, harnesses and help through the same host (and its settings) the tools use.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { backendLine, configuredWorkersLine } from "../backends/index.ts";
import type { HelpSources } from "../help/answer.ts";
import { harnessStateIn, settingValue, type FlowHost } from "../orchestrator/session/index.ts";
import { registerFlowCommand } from "./flow-command.ts";

export function installFlowCommand(pi: ExtensionAPI, host: FlowHost, help: HelpSources): void {
  registerFlowCommand(pi, {
    runStore: (ctx) => host.runStore(ctx),
    flowHome: () => host.settings.flowHome,
    agentDir: () => host.settings.agentDir,
    harnessState: (name) => harnessStateIn(host.settings, name),
    projectTrusted: () => settingValue(host.settings.projectTrusted),
    backend: () => backendLine(host.settings.flow, host.settings.env),
    workers: () => configuredWorkersLine(host.settings.flow, host.settings.env),
    help,
  });
}
