import {
  createAgentSession,
  SessionManager,
  type AgentSession,
  type AgentSessionEvent,
  type ModelRuntime,
} from "@earendil-works/pi-coding-agent";
import type { Api, AssistantMessage, Model } from "@earendil-works/pi-ai";
import { contentText } from "../parent-context/content-text.ts";
import { runInChildSessionContext } from "./child-context.ts";
import { quotaBreach } from "./quotas.ts";
import { parseStructuredAnswer, structuredAnswerInstruction } from "./structured-answer.ts";
import type { ChildRequest, ChildResult, ChildUsage, Harness } from "./types.ts";
import { addMessageUsage, zeroUsage } from "./usage.ts";
import { ChildSessionFile, resumedSessionManager } from "./pi-session-file.ts";
import { continuedSession, type ContinuedSession } from "./pi-continue.ts";
import { stoppedResult } from "./outcomes.ts";
import { loadChildResources } from "./shared-resources.ts";
import { argsLine } from "./cli/guards.ts";
import { childShell, type ChildShell } from "./pi-bash.ts";
import { confinedFileTools } from "./pi-files.ts";
import { attachSteering } from "./pi-steering.ts";
import { deniedPatterns } from "./child-tools.ts";
import { unansweredEnding } from "./pi-endings.ts";
import { CHILD_LOG_LIMITS, withBoundedLogs, type LogLimits } from "./log-bounds.ts";

export interface PiHarnessOptions {
  agentDir: string;
  model: Model<Api>;
  modelRuntime: ModelRuntime;
  /** The run's output and diagnostics logs' bounds; default 16 MiB each. */
  logLimits?: LogLimits;
}

/**
 * The child's Pi session, held in memory: new, or a redacted copy of an earlier run's session when
 * this run resumes it. When the run has a session file (so a later run can resume it),
 * ChildSessionFile writes it there, redacted; it is evidence of the run, never a session of the
 * user's own session list. The file sits in the run's folder, which exists.
 */
function childSessionManager(request: ChildRequest, continued: ContinuedSession | null): SessionManager {
  const { session, cwd } = request;
  // Taken over from another worker: the session that worker saved, redacted as it was stored.
  if (continued) return SessionManager.inMemory(cwd, undefined, continued.entries);
  return session?.resumeFrom === undefined ? SessionManager.inMemory(cwd) : resumedSessionManager(session.resumeFrom, cwd);
}

/** A child's session and its bash, whose processes end with the child. */
interface ChildSession {
  session: AgentSession;
  shell: ChildShell;
}

/** Builds the child inside the child-context guard, so pi-flow does not install itself in it. */
async function buildChildSession(request: ChildRequest, options: PiHarnessOptions, continued: ContinuedSession | null): Promise<ChildSession> {
  const { cwd, profile, outputSchema, loading } = request;
  return runInChildSessionContext(async () => {
    // The child reads the project's settings, extensions and packages only where its parent would.
    const setup = {
      cwd,
      agentDir: options.agentDir,
      projectTrusted: loading.projectTrusted,
      isolated: loading.isolated,
      appendSystemPrompt: [profile.systemPrompt, ...(outputSchema ? [structuredAnswerInstruction(outputSchema)] : [])],
    };
    const { resourceLoader, settingsManager } = request.sharedResources ? await request.sharedResources.forChild(setup) : await loadChildResources(setup);
    // The child's bash replaces Pi's built-in one: no secrets in its environment, nothing left running
    // after the child (pi-bash.ts). An extension's own bash (a sandbox of the user's) stays the child's.
    const shell = childShell(cwd, settingsManager);
    const denied = deniedPatterns(profile);
    const extensionTool = (name: string) => resourceLoader.getExtensions().extensions.some((extension) => extension.tools.has(name));
    const extensionBash = extensionTool("bash");
    // A worktree child's write and edit do not reach the user's own tree (pi-files.ts); an extension's own (a remote write) stays the child's.
    const fileTools = request.worktreeRoots ? confinedFileTools(cwd, request.worktreeRoots).filter((tool) => !extensionTool(tool.name)) : [];
    let session: AgentSession | undefined;
    try {
      ({ session } = await createAgentSession({
        cwd,
        agentDir: options.agentDir,
        modelRuntime: options.modelRuntime,
        model: options.model,
        resourceLoader,
        settingsManager,
        sessionManager: childSessionManager(request, continued),
        customTools: [...(extensionBash ? [] : [shell.tool]), ...fileTools],
        ...(profile.tools ? { tools: profile.tools } : {}),
        // The tools list bounds what the child declares; MCP tools stay callable from its other tools unless denied here too.
        ...(denied.length > 0 ? { excludeTools: denied } : {}),
      }));
      await session.bindExtensions({});
    } catch (error) {
      session?.dispose();
      await shell.end();
      throw error;
    }
    return { session, shell };
  });
}

/** The first quota the child broke, once it broke one. */
interface QuotaState {
  breach?: string;
}

/**
 * Enforces the quotas on the child's own loop: a tool call past maxToolCalls is blocked before it
 * runs, a turn past maxTurns is stopped before its model request, and either stops the child.
 */
function enforceQuotas(session: AgentSession, request: ChildRequest, state: QuotaState, spent: ChildUsage): () => void {
  const quotas = request.quotas;
  if (!quotas || (quotas.maxTurns === undefined && quotas.maxToolCalls === undefined)) return () => {};
  // A continued session's saved turns count against its quotas too.
  const counts = { turns: spent.turns, toolCalls: spent.toolCalls };
  const stop = (message: string) => {
    if (state.breach !== undefined) return;
    state.breach = message;
    request.onDiagnostic({ type: "error", message });
    void session.abort();
  };
  const agent = session.agent;
  const inner = agent.beforeToolCall;
  agent.beforeToolCall = async (context, signal) => {
    counts.toolCalls++;
    const breach = state.breach ?? quotaBreach(quotas, counts);
    if (breach !== undefined) {
      stop(breach);
      return { block: true, reason: breach };
    }
    return inner ? inner(context, signal) : undefined;
  };
  const unsubscribe = session.subscribe((event: AgentSessionEvent) => {
    if (event.type !== "turn_start") return;
    counts.turns++;
    const breach = quotaBreach(quotas, counts);
    if (breach !== undefined) stop(breach);
  });
  return () => {
    unsubscribe();
    agent.beforeToolCall = inner;
  };
}

/** The child's last model reply as it arrived: Pi may take it out of the session (a cut-off reply it tries to recover), and its ending is the run's. */
interface LastReply {
  message?: AssistantMessage;
}

/**
 * Follows the child's events: usage, activity, streamed text and diagnostics. `save` is called once
 * the prompt (or a steer) is in the session and after each turn, so the session file keeps the
 * prompt even if the first turn never completes, and every whole turn.
 */
function observe(session: AgentSession, request: ChildRequest, usage: ChildUsage, last: LastReply, save: () => void): () => void {
  const progress = (activity: string) => request.onProgress({ usage: { ...usage }, activity });
  return session.subscribe((event: AgentSessionEvent) => {
    switch (event.type) {
      case "turn_start":
        progress("thinking");
        break;
      case "turn_end":
        usage.turns++;
        save();
        progress("turn finished");
        break;
      case "message_end": {
        // Pi adds a message to its session right after telling its listeners, in the same turn of
        // the event loop: a microtask later, the prompt is there to save.
        if (event.message.role === "user") queueMicrotask(save);
        if (event.message.role !== "assistant") break;
        const message = event.message as AssistantMessage;
        last.message = message;
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
        request.onDiagnostic({ type: "tool_call", tool: event.toolName, args: argsLine(event.args), id: event.toolCallId });
        progress(`calling ${event.toolName}`);
        break;
      case "tool_execution_end":
        request.onDiagnostic({ type: "tool_result", tool: event.toolName, isError: event.isError, id: event.toolCallId });
        break;
      case "compaction_start":
        progress("compacting"); // counted on the run's span (src/telemetry)
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
async function settle(session: AgentSession, request: ChildRequest, usage: ChildUsage, thrown: unknown, quota: QuotaState, last: LastReply): Promise<ChildResult> {
  const failed = (message: string): ChildResult => ({ outcome: "failed", error: { code: "failed", message }, usage });
  // A quota stops the child with an abort of its own: the run fails closed, naming the quota.
  if (quota.breach !== undefined) return failed(quota.breach);
  if (request.signal.aborted) return stoppedResult(request, usage);
  // A continued session that was already answered sends no reply: its saved one is the last.
  const final = last.message ?? lastAssistant(session);
  if (thrown !== undefined) return failed(`The child's model failed: ${final?.errorMessage ?? (thrown instanceof Error ? thrown.message : String(thrown))}`);
  if (!final) return failed("The child's model never replied: its session holds no reply from it.");
  const unanswered = unansweredEnding(final, session.model);
  if (unanswered !== undefined) return failed(unanswered);
  const text = contentText(final.content).trim();
  if (!request.outputSchema) return { outcome: "succeeded", value: text, usage };
  const parsed = await parseStructuredAnswer(text, request.outputSchema, request.signal);
  if (!parsed.ok && request.signal.aborted) return stoppedResult(request, usage);
  return parsed.ok
    ? { outcome: "succeeded", value: parsed.value, usage }
    : failed(parsed.message);
}

/** How long a child's extensions get to clean up once it has settled; the run does not wait longer. */
const SHUTDOWN_WAIT_MS = 5000;

/**
 * Tells the child's extensions its session is over, as Pi does when a session of its own quits
 * (Pi's `dispose` does not): what they started for it (a server, a watcher) ends with the child
 * instead of outliving it. A handler's failure is the run's diagnostic, never its outcome.
 */
async function shutDown(session: AgentSession, request: ChildRequest): Promise<void> {
  const runner = session.extensionRunner;
  if (!runner.hasHandlers("session_shutdown")) return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      runner.emit({ type: "session_shutdown", reason: "quit" }),
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          report(request, `The child's extensions were still cleaning up ${SHUTDOWN_WAIT_MS / 1000} s after it settled; the run did not wait for them.`);
          resolve();
        }, SHUTDOWN_WAIT_MS);
        timer.unref();
      }),
    ]);
  } catch (error) {
    report(request, `An extension of the child failed as its session ended: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** A diagnostic of a child that may have settled already: its evidence may be closed, and nothing may throw into the host. */
function report(request: ChildRequest, message: string): void {
  try {
    request.onDiagnostic({ type: "error", message });
  } catch {
    // The run's evidence is closed.
  }
}

/** The pi harness: an in-process child AgentSession on the parent's model runtime. */
export function createPiHarness(options: PiHarnessOptions): Harness {
  return {
    name: "pi",
    async run(given) {
      const request = withBoundedLogs(given, options.logLimits ?? CHILD_LOG_LIMITS);
      const saved = request.checkpoint?.saved;
      const continued = saved ? continuedSession(saved, options.model) : null;
      const usage = continued ? { ...continued.usage } : zeroUsage();
      const { session, shell } = await buildChildSession(request, options, continued);
      const file = request.session ? new ChildSessionFile(session.sessionManager, request.session.file) : undefined;
      const fileError = (message: string) => request.onDiagnostic({ type: "error", message });
      // A resumed child's file holds the conversation it continues from the start, as a fork's would.
      if (request.session?.resumeFrom !== undefined) file?.flush(fileError);
      const checkpoint = () => request.checkpoint?.save(session.sessionManager.getEntries());
      const last: LastReply = {};
      const unsubscribe = observe(session, request, usage, last, () => {
        file?.flush(fileError);
        // A turn that ends after the stop holds what the stop cut (a tool's "Command aborted"): handed
        // over, it would read as the tool's answer and never run again. The last whole turn stays saved.
        if (!request.signal.aborted) checkpoint();
      });
      const quota: QuotaState = {};
      const releaseQuotas = enforceQuotas(session, request, quota, usage);
      const detachSteering = attachSteering(session, request);
      const stop = () => void session.abort();
      request.signal.addEventListener("abort", stop, { once: true });
      let thrown: unknown;
      try {
        // A continued session goes on from its last whole turn; one that holds its final answer is done.
        if (!request.signal.aborted) {
          if (!continued) await session.prompt(request.prompt);
          else if (!continued.answered) await session.agent.continue();
        }
        // A steer queued after the child's last model request still gets its answer.
        while (!request.signal.aborted && quota.breach === undefined && session.agent.hasQueuedMessages()) {
          await session.agent.continue();
        }
      } catch (error) {
        thrown = error;
      } finally {
        request.signal.removeEventListener("abort", stop);
        request.steering?.close();
        detachSteering();
        releaseQuotas();
        unsubscribe();
        file?.close(fileError);
        // A stopped child's session may end mid-turn: its last checkpoint stays the last whole turn.
        if (!request.signal.aborted) checkpoint();
        // Settled or stopped, the child leaves nothing running: a background job of its bash is its own.
        await shell.end();
      }
      try {
        return await settle(session, request, usage, thrown, quota, last);
      } finally {
        await shutDown(session, request);
        session.dispose();
      }
    },
  };
}
