import { resolve } from "node:path";
import { runToolCall, type AgentToolResult } from "@earendil-works/pi-agent-core";
import {
  createAgentSession,
  DefaultResourceLoader,
  getAgentDir,
  ModelRegistry,
  SessionManager,
  SettingsManager,
  type AgentSession,
} from "@earendil-works/pi-coding-agent";
import type { AssistantMessage, ToolCall, ToolResultMessage } from "@earendil-works/pi-ai";
import { FlowError } from "../contract/errors.ts";
import { redactText } from "../runs/index.ts";
import type { RegisteredToolSchema } from "../orchestrator/workflow/index.ts";
import { openFlowSession } from "./flow-session-file.ts";
import piFlow from "../index.ts";

export interface HeadlessOptions {
  cwd: string;
  /**
   * The project's trust for this command (cli/trust.ts). Untrusted: Pi loads none of its
   * extensions, packages or settings, exactly as `pi -p` would not.
   */
  projectTrusted: boolean;
  /** Extra Pi extension files or packages (`--extension`), loaded after pi-flow. */
  extensions: readonly string[];
  /** Merged over Pi's `flow` settings for this process only; never written to a settings file. */
  flowSettings?: Record<string, unknown>;
  /**
   * Given, the session is kept (flow-session-file.ts): `commandLine` (as typed, `--args` left out)
   * names it, and `ran` (run-plan.ts's runAsChildrenSeeIt) is its first message.
   */
  kept?: { commandLine: string; ran: string };
  /**
   * Also load the Pi extensions of the project and the user (`flow types` declares their tools).
   * One that fails to load is left out and listed in `extensionProblems` instead of refusing.
   */
  ambientExtensions?: boolean;
}

export interface ToolOutcome {
  /** The tool's structuredContent: for Flow tools, the contract envelope. */
  structured: unknown;
  /** The tool's details (for external_workflow, WorkflowDetails). */
  details: unknown;
  text: string;
  isError: boolean;
}

export interface ToolCallOptions {
  signal: AbortSignal;
  onUpdate?(partial: AgentToolResult<unknown>): void;
}

export interface HeadlessSession {
  session: AgentSession;
  registry: ModelRegistry;
  agentDir: string;
  /** Selects `provider/id` for this session (children inherit it); model_unavailable when it cannot run. */
  useModel(reference: string): Promise<void>;
  /** Whether the session has a model with credentials, which its children inherit. */
  hasUsableModel(): Promise<boolean>;
  callableToolNames(): string[];
  /** Each callable tool with its schemas, as its definition registers them. */
  callableTools(): RegisteredToolSchema[];
  /** Extensions that failed to load, with ambientExtensions. */
  extensionProblems: string[];
  /** Calls one tool through Pi's tool pipeline (validation, hooks), as if the model had asked. */
  callTool(name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<ToolOutcome>;
  /**
   * Ends the session as Pi ends one on quit (session_shutdown, then dispose): pi-flow's host
   * removes the session's owner marker and ends what is still running, so retention in a later
   * process does not take this finished command for an open session.
   */
  close(): Promise<void>;
}

const ZERO_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

const textOf = (result: AgentToolResult<unknown>): string =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("");

/**
 * A Pi session with no one at the keyboard: Pi's agent directory (credentials, models, settings)
 * and pi-flow (the modules this process runs) plus any `--extension`. It is never kept in Pi's
 * sessions directory: it holds the command line and every tool call's arguments, and a demo or
 * replay run should leave nothing behind but its run. `flow run`'s is kept redacted beside its runs
 * (flow-session-file.ts); the others are in memory only. The session never talks to a model itself;
 * only its children do.
 */
export async function openHeadlessSession(options: HeadlessOptions): Promise<HeadlessSession> {
  const { cwd } = options;
  const agentDir = getAgentDir();
  const settingsManager = SettingsManager.create(cwd, agentDir, { projectTrusted: options.projectTrusted });
  const loader = new DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager,
    // The session only hosts Flow's tools; children load the user's extensions, skills and context.
    noExtensions: options.ambientExtensions !== true,
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
    // pi-flow itself is the module this process already runs, not a second copy Pi compiles from the manifest.
    extensionFactories: [{ name: "pi-flow", factory: piFlow }],
    additionalExtensionPaths: options.extensions.map((path) => resolve(cwd, path)),
  });
  await loader.reload();
  const errors = loader.getExtensions().errors;
  const extensionProblems = options.ambientExtensions ? errors.map((error) => `${error.path}: ${error.error}`) : [];
  if (errors.length > 0 && !options.ambientExtensions) {
    throw new FlowError("configuration_invalid", `An extension failed to load: ${errors.map((error) => `${error.path}: ${error.error}`).join("; ")}`);
  }
  if (options.flowSettings) settingsManager.applyOverrides({ flow: options.flowSettings } as Parameters<SettingsManager["applyOverrides"]>[0]);
  // flow run's session is kept, redacted, beside its runs; flow check's and flow types' are not kept.
  const flowSession = options.kept !== undefined ? openFlowSession(cwd, agentDir) : undefined;
  const sessionManager = flowSession?.sessionManager ?? SessionManager.inMemory(cwd);
  const { session } = await createAgentSession({ cwd, agentDir, resourceLoader: loader, settingsManager, sessionManager });
  await session.bindExtensions({});
  const registry = new ModelRegistry(session.modelRuntime);
  if (options.kept !== undefined) {
    sessionManager.appendSessionInfo(redactText(options.kept.commandLine).text.slice(0, 120)); // redacted before it is cut
    sessionManager.appendMessage({ role: "user", content: [{ type: "text", text: `Ran from the shell: ${options.kept.ran}` }], timestamp: Date.now() });
    flowSession?.save();
  }
  let calls = 0;

  return {
    session,
    registry,
    agentDir,
    async useModel(reference) {
      const slash = reference.indexOf("/");
      const model = slash > 0 ? registry.find(reference.slice(0, slash), reference.slice(slash + 1)) : undefined;
      if (!model) throw new FlowError("model_unavailable", `Model "${reference}" is not known to Pi here (give provider/id, as pi --list-models shows).`);
      try {
        await session.setModel(model);
      } catch (error) {
        throw new FlowError("model_unavailable", `Model "${reference}" cannot run: ${(error as Error).message}.`);
      }
    },
    // With nothing configured, Pi still gives the session a placeholder model; only credentials tell.
    hasUsableModel: async () => session.model !== undefined && (await session.modelRuntime.checkAuth(session.model.provider)) !== undefined,
    callableToolNames: () => session.getCallableToolNames(),
    callableTools: () =>
      session.getCallableToolNames().flatMap((name) => {
        const definition = session.getToolDefinition(name);
        if (!definition) return [];
        const { description, parameters, outputSchema } = definition as typeof definition & { outputSchema?: unknown };
        return [{ name, description, parameters, ...(outputSchema !== undefined ? { outputSchema } : {}) }];
      }),
    extensionProblems,
    async callTool(name, args, { signal, onUpdate }) {
      const toolCall: ToolCall = { type: "toolCall", id: `flow_${++calls}`, name, arguments: args as ToolCall["arguments"] };
      // The call is recorded as the flow command's own turn, so nested tools.* calls have an issuing
      // message and a resumed session shows what ran.
      const assistantMessage: AssistantMessage = {
        role: "assistant",
        content: [toolCall],
        api: "pi-flow-cli",
        provider: "pi-flow",
        model: "flow",
        usage: ZERO_USAGE,
        stopReason: "toolUse",
        timestamp: Date.now(),
      };
      sessionManager.appendMessage(assistantMessage);
      session.refreshContext();
      const tools = session.state.tools;
      const outcome = await runToolCall(toolCall, {
        tools,
        assistantMessage,
        context: { messages: session.state.messages, tools },
        ...(session.agent.beforeToolCall ? { beforeToolCall: session.agent.beforeToolCall } : {}),
        ...(session.agent.afterToolCall ? { afterToolCall: session.agent.afterToolCall } : {}),
        signal,
        ...(onUpdate ? { onUpdate } : {}),
      });
      const result = outcome.result as AgentToolResult<unknown> & { structuredContent?: unknown };
      const toolResult = {
        role: "toolResult",
        toolCallId: toolCall.id,
        toolName: name,
        content: result.content,
        isError: outcome.isError,
        timestamp: Date.now(),
      } as ToolResultMessage;
      sessionManager.appendMessage(toolResult);
      flowSession?.save();
      return { structured: result.structuredContent, details: result.details, text: textOf(result), isError: outcome.isError };
    },
    close: async () => {
      try {
        if (session.extensionRunner.hasHandlers("session_shutdown")) await session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });
      } finally {
        session.dispose();
      }
    },
  };
}
