import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { WORKFLOW_HELPERS } from "../helpers/index.ts";
import { prewarmWorkflowWorkers } from "../runtime/index.ts";
import { inChildSessionContext } from "./harnesses/index.ts";
import { readCatalog } from "./orchestrator/workflow/index.ts";
import { FlowHost, harnessStateIn, settingValue } from "./orchestrator/session/index.ts";
import { withoutTooDeepArguments } from "./contract/deep-arguments.ts";
import { createDelegateTool } from "./tools/delegate.ts";
import type { HelpSources } from "./help/answer.ts";
import { createHelpTool } from "./tools/help.ts";
import { createRunsTool } from "./tools/runs.ts";
import { createWorkflowTool } from "./tools/workflow.ts";
import { flushTelemetry } from "./telemetry/index.ts";
import { installUi } from "./ui/index.ts";
import { installFlowCommand } from "./commands/index.ts";
import { cleanupIsolation } from "./isolation/index.ts";

/**
 * pi-flow's entry, named by the package manifest (through the root index.ts). Registration only:
 * every behaviour lives in the tool, orchestrator and ui modules. Inside a child session that
 * pi-flow itself is building, it installs nothing.
 */
export default function piFlow(pi: ExtensionAPI): void {
  if (inChildSessionContext()) return;
  const host = new FlowHost(pi);
  const helpSources: HelpSources = {
    registeredTools: () => pi.getAllTools().map((tool) => tool.name),
    workflowHelpers: WORKFLOW_HELPERS,
    harnessState: (name, _cwd, signal) => harnessStateIn(host.settings, name, signal),
    catalog: (cwd) => readCatalog(cwd, host.settings.flowHome, settingValue(host.settings.projectTrusted)),
  };
  const widget = installUi(pi, host);
  installFlowCommand(pi, host, helpSources);
  // PI_FLOW_WORKFLOWS=off leaves workflow scripts out of a session; help then reports it unregistered.
  const workflowsEnabled = process.env.PI_FLOW_WORKFLOWS !== "off";
  // A warm sandbox worker makes a session's first workflow start in milliseconds; it is started
  // with the session, never at load, and does not keep the process alive.
  pi.on("session_start", (_event, ctx) => {
    host.bind(ctx);
    if (workflowsEnabled) void prewarmWorkflowWorkers(1).catch(() => undefined);
    host.pruneSoon(ctx);
    // Worktrees and refs a crashed host left behind (src/isolation/cleanup.ts): housekeeping, off the
    // start-up path. The folders are read now: by the next turn of the loop the session may be gone.
    const [flowHome, cwd] = [host.settings.flowHome, ctx.cwd];
    setImmediate(() => void cleanupIsolation(flowHome, cwd).catch(() => undefined));
    widget.attach(ctx);
  });
  pi.on("session_shutdown", async (event, ctx) => {
    widget.detach();
    await host.close(event.reason, ctx);
    await flushTelemetry(); // the session's spans leave before Pi exits (a no-op when tracing is off)
  });
  // Children launched in one turn of the parent share their loads of the project's resources.
  pi.on("turn_start", () => host.turnStarted());
  // Completions that settled while the parent was busy go out as one batch once it settles.
  pi.on("agent_settled", (_event, ctx) => host.parentSettled(ctx));
  // A pi-flow tool call nested too deep for Pi to copy would fail every later turn of the session.
  pi.on("message_end", (event) => {
    const message = withoutTooDeepArguments(event.message);
    return message === undefined ? undefined : { message };
  });
  pi.registerTool(createDelegateTool(host));
  pi.registerTool(createRunsTool(host));
  if (workflowsEnabled) pi.registerTool(createWorkflowTool(host));
  pi.registerTool(createHelpTool(helpSources));
}
