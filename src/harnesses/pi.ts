import {
  createAgentSession,
  DefaultResourceLoader,
  SessionManager,
  SettingsManager,
  type AgentSession,
  type AgentSessionEvent,
  type ModelRuntime,
} from "@earendil-works/pi-coding-agent";
import type { Api, AssistantMessage, Model } from "@earendil-works/pi-ai";
import { contentText } from "../context/content-text.ts";
import { runInChildSessionContext } from "./child-context.ts";
import { parseStructuredAnswer, structuredAnswerInstruction } from "./structured-answer.ts";
import type { ChildRequest, ChildResult, ChildUsage, Harness } from "./types.ts";
import { addMessageUsage, zeroUsage } from "./usage.ts";

export interface PiHarnessOptions {
  agentDir: string;
  model: Model<Api>;
  modelRuntime: ModelRuntime;
}

/** Builds the child inside the child-context guard, so pi-flow does not install itself in it. */
async function buildChildSession(request: ChildRequest, options: PiHarnessOptions): Promise<AgentSession> {
  const { cwd, profile, outputSchema } = request;
  return runInChildSessionContext(async () => {
    const loader = new DefaultResourceLoader({
      cwd,
      agentDir: options.agentDir,
      noPromptTemplates: true,
      noThemes: true,
      appendSystemPrompt: [profile.systemPrompt, ...(outputSchema ? [structuredAnswerInstruction(outputSchema)] : [])],
    });
    await loader.reload();
    const { session } = await createAgentSession({
      cwd,
      agentDir: options.agentDir,
      modelRuntime: options.modelRuntime,
      model: options.model,
      resourceLoader: loader,
      settingsManager: SettingsManager.create(cwd, options.agentDir),
      // A child's transcript is evidence of its run, kept by pi-flow; it is never a Pi session of its own.
      sessionManager: SessionManager.inMemory(cwd),
      ...(profile.tools ? { tools: profile.tools } : {}),
    });
    try {
      await session.bindExtensions({});
    } catch (error) {
      session.dispose();
      throw error;
    }
    return session;
  });
}

/** Follows the child's events: usage, activity, streamed text and diagnostics. */
function observe(session: AgentSession, request: ChildRequest, usage: ChildUsage): () => void {
  const progress = (activity: string) => request.onProgress({ usage: { ...usage }, activity });
  return session.subscribe((event: AgentSessionEvent) => {
    switch (event.type) {
      case "turn_start":
        progress("thinking");
        break;
      case "turn_end":
        usage.turns++;
        progress("turn finished");
        break;
      case "message_end": {
        if (event.message.role !== "assistant") break;
        const message = event.message as AssistantMessage;
        addMessageUsage(usage, message.usage, session.model);
        const text = contentText(message.content);
        if (text.length > 0) request.onOutput(text);
        if (message.stopReason === "error" && message.errorMessage) {
          request.onDiagnostic({ type: "error", message: message.errorMessage });
        }
        break;
      }
      case "tool_execution_start":
        usage.toolCalls++;
        request.onDiagnostic({ type: "tool_call", tool: event.toolName, args: JSON.stringify(event.args ?? {}) });
        progress(`calling ${event.toolName}`);
        break;
      case "tool_execution_end":
        request.onDiagnostic({ type: "tool_result", tool: event.toolName, isError: event.isError });
        break;
    }
  });
}

function lastAssistant(session: AgentSession): AssistantMessage | undefined {
  for (let index = session.messages.length - 1; index >= 0; index--) {
    const message = session.messages[index]!;
    if (message.role === "assistant") return message as AssistantMessage;
  }
  return undefined;
}

/** Turns a settled child session into the run's outcome and canonical answer. */
function settle(session: AgentSession, request: ChildRequest, usage: ChildUsage, thrown: unknown): ChildResult {
  if (request.signal.aborted) {
    return request.timedOut()
      ? { outcome: "timed_out", error: { code: "timed_out", message: "The child ran out of time." }, usage }
      : { outcome: "cancelled", error: { code: "cancelled", message: "The child was cancelled." }, usage };
  }
  const final = lastAssistant(session);
  if (thrown !== undefined || !final || final.stopReason === "error" || final.stopReason === "aborted") {
    const reason = final?.errorMessage ?? (thrown instanceof Error ? thrown.message : thrown ? String(thrown) : "no answer");
    return { outcome: "failed", error: { code: "failed", message: `The child's model failed: ${reason}` }, usage };
  }
  const text = contentText(final.content).trim();
  if (text.length === 0) {
    return { outcome: "failed", error: { code: "failed", message: "The child finished without an answer." }, usage };
  }
  if (!request.outputSchema) return { outcome: "succeeded", value: text, usage };
  const parsed = parseStructuredAnswer(text, request.outputSchema);
  return parsed.ok
    ? { outcome: "succeeded", value: parsed.value, usage }
    : { outcome: "failed", error: { code: "failed", message: parsed.message }, usage };
}

/** The pi harness: an in-process child AgentSession on the parent's model runtime. */
export function createPiHarness(options: PiHarnessOptions): Harness {
  return {
    name: "pi",
    async run(request) {
      const usage = zeroUsage();
      const session = await buildChildSession(request, options);
      const unsubscribe = observe(session, request, usage);
      const stop = () => void session.abort();
      request.signal.addEventListener("abort", stop, { once: true });
      let thrown: unknown;
      try {
        if (!request.signal.aborted) await session.prompt(request.prompt);
      } catch (error) {
        thrown = error;
      } finally {
        request.signal.removeEventListener("abort", stop);
        unsubscribe();
      }
      try {
        const result = settle(session, request, usage, thrown);
        request.onDiagnostic({ type: "usage", usage: { ...usage } });
        return result;
      } finally {
        session.dispose();
      }
    },
  };
}
