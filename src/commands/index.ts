// The `/flow` command family, a person's front door beside the model's tools: it reads this
// session's runs, catalog, harnesses and help through the same host the tools use.
import { getAgentDir, type ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { HelpSources } from "../help/answer.ts";
import type { FlowHost } from "../orchestrator/session/index.ts";
import { registerFlowCommand } from "./flow-command.ts";

export function installFlowCommand(pi: ExtensionAPI, host: FlowHost, help: HelpSources): void {
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
}
