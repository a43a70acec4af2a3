/**
 * A real Pi session for end-to-end tests: Pi's agent loop, native codemode, and pi-flow loaded
 * through its own package manifest (as `pi -e <path>` loads it). Pi's faux provider answers each
 * model request; nothing else is stood in for.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createAgentSession,
  createCodemodeExtension,
  DefaultResourceLoader,
  ModelRuntime,
  ProjectTrustStore,
  SessionManager,
  SettingsManager,
  type AgentSession,
  type ExtensionFactory,
  type ExtensionContext,
  type ExtensionUIContext,
} from "@earendil-works/pi-coding-agent";
import {
  fauxAssistantMessage,
  fauxProvider,
  fauxText,
  fauxToolCall,
  type FauxProviderHandle,
  type FauxResponseStep,
  type JsonObject,
  type ToolResultMessage,
  type AssistantMessage,
} from "@earendil-works/pi-ai";

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export interface PiSessionOptions {
  /** The project folder; default a new temporary one (removed on dispose only when it is). */
  cwd?: string;
  /** Persist the session to a file (supervision needs a persisted session). Default true. */
  persisted?: boolean;
  /** Extra inline extensions, loaded after pi-flow. */
  extensions?: ExtensionFactory[];
  /** Environment for the session; PI_FLOW_HOME defaults to a temp folder of this session. */
  env?: Record<string, string>;
  /** The UI the session binds (Pi's TUI side, as tests record it) and the mode extensions see. */
  ui?: ExtensionUIContext;
  mode?: ExtensionContext["mode"];
  /** The faux model streams at this rate (Pi's faux `tokensPerSecond`); default at once. */
  tokensPerSecond?: number;
  /**
   * Whether the project is trusted, as Pi decided it at start-up; default true, saved in the
   * session's own agent directory (trust.json) as Pi's /trust saves it. Untrusted: the session
   * loads none of the project's .pi resources, as Pi would not.
   */
  trusted?: boolean;
  /** The faux model's price per million tokens (Pi's catalog shape); default free. */
  modelCost?: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** Pi's settings for the session (what pi.getSettings() returns to extensions), e.g. `{ flow: { … } }`. */
  settings?: Record<string, unknown>;
}

export interface ToolOutcome {
  text: string;
  isError: boolean;
  details: unknown;
  structuredContent: unknown;
}

export interface CodemodeOutcome {
  /** The codemode tool result's text: header, output, and any script error. */
  text: string;
  isError: boolean;
  /** What the script returned, parsed from its output (the script must return a JSON-able value). */
  value: unknown;
}

export interface TurnScript {
  /** Answers for child sessions' model requests, in the order children ask. */
  children?: FauxResponseStep[];
  /**
   * Send the code exactly as given (for examples that must run verbatim); its value is then read
   * from the output, so the script must print nothing but its return value.
   */
  verbatim?: boolean;
}

export interface PiTestSession {
  session: AgentSession;
  faux: FauxProviderHandle;
  cwd: string;
  agentDir: string;
  flowHome: string;
  /** The model calls one tool directly; resolves to Pi's finalized tool result. */
  callTool(name: string, args: Record<string, unknown>, script?: TurnScript): Promise<ToolOutcome>;
  /** The model calls many tools in one message, as a model may; resolves to each result, in order. */
  callToolsAtOnce(calls: { name: string; args: unknown }[], script?: TurnScript): Promise<ToolOutcome[]>;
  /** The model runs a native codemode script; resolves to the script's returned value. */
  runCodemode(code: string, script?: TurnScript): Promise<CodemodeOutcome>;
  /** A plain user turn the parent model answers with text, to build up conversation history. */
  say(userText: string, assistantText: string): Promise<void>;
  /** Queue answers for child model requests (for children that outlive a turn). */
  queueChildren(steps: FauxResponseStep[]): void;
  /** Parent answers still queued; a test that scripted exactly what happens sees 0 here. */
  pendingParentSteps(): number;
  /** The session ends as on quit (session_shutdown, reason "quit"); its folder stays until dispose(). */
  shutdown(): Promise<void>;
  /**
   * The test is done with the session: it ends as on quit unless shutdown() ended it (its background
   * runs cancelled and settled, their last writes on disk), then its folder goes when it owns it.
   * Await it: a folder removed while a run still writes in it fails with ENOTEMPTY.
   */
  dispose(): Promise<void>;
}

/**
 * Every parent prompt starts with this marker; a child's first user message never does (its parent
 * context, if any, is quoted inside a block). The faux router uses it to tell parent from child.
 */
export const PARENT_MARKER = "[parent]";

const RESULT_MARKER = "__pi_flow_result__";

export async function startPiSession(options: PiSessionOptions = {}): Promise<PiTestSession> {
  const ownsCwd = options.cwd === undefined;
  const cwd = options.cwd ?? mkdtempSync(join(tmpdir(), "pi-flow-e2e-"));
  const agentDir = join(cwd, ".agent");
  const flowHome = options.env?.PI_FLOW_HOME ?? join(cwd, ".flow-home");
  // Put back on dispose, unless another session has set them since: the next test file may share this process.
  const outerDirs = { PI_FLOW_HOME: process.env.PI_FLOW_HOME, PI_CODING_AGENT_DIR: process.env.PI_CODING_AGENT_DIR };
  process.env.PI_FLOW_HOME = flowHome;
  const previousEnv = Object.keys(options.env ?? {}).map((key) => [key, process.env[key]] as const);
  for (const [key, value] of Object.entries(options.env ?? {})) process.env[key] = value;
  // Children read settings and agent definitions from Pi's agent directory: keep it this test's own.
  process.env.PI_CODING_AGENT_DIR = agentDir;

  const faux = fauxProvider({
    provider: "faux",
    models: [{ id: "faux-1", ...(options.modelCost ? { cost: options.modelCost } : {}) }],
    ...(options.tokensPerSecond ? { tokensPerSecond: options.tokensPerSecond } : {}),
  });
  const parentSteps: FauxResponseStep[] = [];
  const childSteps: FauxResponseStep[] = [];
  const router: FauxResponseStep = (context, options, state, model) => {
    // The last user message: after Pi compacts a long session, the first one is the summary.
    const lastUser = context.messages.findLast((message) => message.role === "user");
    const text = typeof lastUser?.content === "string" ? lastUser.content : (lastUser?.content.map((part) => (part.type === "text" ? part.text : "")).join("") ?? "");
    const queue = text.startsWith(PARENT_MARKER) ? parentSteps : childSteps;
    const step = queue.shift();
    if (!step) return fauxAssistantMessage(`(nothing scripted for this ${queue === parentSteps ? "parent" : "child"} request)`);
    return typeof step === "function" ? step(context, options, state, model) : step;
  };
  faux.setResponses(Array.from({ length: 10_000 }, () => router));
  const runtime = await ModelRuntime.create({ authPath: join(agentDir, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");

  const trusted = options.trusted ?? true;
  if (trusted) new ProjectTrustStore(agentDir).set(cwd, true);
  const loader = new DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager: SettingsManager.create(cwd, agentDir, { projectTrusted: trusted }),
    additionalExtensionPaths: [PROJECT_ROOT],
    extensionFactories: [createCodemodeExtension({ mode: "on" }), ...(options.extensions ?? [])],
  });
  await loader.reload();
  const loadErrors = loader.getExtensions().errors;
  if (loadErrors.length > 0) throw new Error(`extension load failed: ${JSON.stringify(loadErrors)}`);

  const settingsManager = SettingsManager.inMemory(options.settings ?? {}, { projectTrusted: trusted });
  settingsManager.applyOverrides({ defaultTools: ["+codemode"] });
  const sessionManager =
    options.persisted === false ? SessionManager.inMemory() : SessionManager.create(cwd, join(agentDir, "sessions"));
  const { session } = await createAgentSession({
    cwd,
    agentDir,
    modelRuntime: runtime,
    model: faux.getModel(),
    resourceLoader: loader,
    settingsManager,
    sessionManager,
  });
  await session.bindExtensions({ ...(options.ui ? { uiContext: options.ui } : {}), ...(options.mode ? { mode: options.mode } : {}) });

  // Finalized results as Pi's loop emitted them, structuredContent included.
  const finalized = new Map<string, { result: { structuredContent?: unknown }; isError: boolean }>();
  session.subscribe((event) => {
    if (event.type === "tool_execution_end") finalized.set(event.toolCallId, { result: event.result, isError: event.isError });
  });

  const lastToolResult = (toolCallId: string): ToolResultMessage => {
    const message = session.messages.find(
      (m): m is ToolResultMessage => m.role === "toolResult" && m.toolCallId === toolCallId,
    );
    if (!message) throw new Error(`no tool result for ${toolCallId}`);
    return message;
  };
  const textOf = (message: ToolResultMessage) =>
    message.content.map((part) => (part.type === "text" ? part.text : "")).join("");

  let callCounter = 0;
  let shutDown = false;
  let disposed = false;
  const turn = async (label: string, toolCall: AssistantMessage, script: TurnScript) => {
    // Steps an aborted turn never reached would answer this one: drop them.
    parentSteps.length = 0;
    parentSteps.push(toolCall, fauxAssistantMessage([fauxText("done")]));
    childSteps.push(...(script.children ?? []));
    await session.prompt(`${PARENT_MARKER} ${label}`);
  };
  /** Pi's finalized result of one tool call, as the loop emitted it and as the session kept it. */
  const outcomeOf = (id: string): ToolOutcome => {
    const event = finalized.get(id);
    const message = session.messages.findLast((m): m is ToolResultMessage => m.role === "toolResult" && m.toolCallId === id);
    if (!event && !message) throw new Error(`no tool result for ${id}`);
    const result = event?.result as { content?: ToolResultMessage["content"]; details?: unknown; structuredContent?: unknown } | undefined;
    return {
      text: message ? textOf(message) : (result?.content ?? []).map((part) => (part.type === "text" ? part.text : "")).join(""),
      isError: event?.isError ?? message!.isError,
      details: message?.details ?? result?.details,
      structuredContent: result?.structuredContent,
    };
  };
  const callTool = async (name: string, args: Record<string, unknown>, script: TurnScript = {}): Promise<ToolOutcome> => {
    const [outcome] = await callToolsAtOnce([{ name, args }], script, `call ${name}`);
    return outcome!;
  };
  const callToolsAtOnce = async (calls: { name: string; args: unknown }[], script: TurnScript = {}, label = `call ${calls.length} tools`): Promise<ToolOutcome[]> => {
    const ids = calls.map(() => `call_${++callCounter}`);
    const message = fauxAssistantMessage(
      calls.map((call, at) => fauxToolCall(call.name, call.args as JsonObject, { id: ids[at]! })),
      { stopReason: "toolUse" },
    );
    await turn(label, message, script);
    return ids.map(outcomeOf);
  };

  const runCodemode = async (code: string, script: TurnScript = {}): Promise<CodemodeOutcome> => {
    const id = `code_${++callCounter}`;
    // The script's value is returned wrapped in a marker, so it can be found in the output text.
    const wrapped = script.verbatim ? code : `const __run = async () => {\n${code}\n};\nreturn { ${RESULT_MARKER}: await __run() };`;
    await turn("run a script", fauxAssistantMessage([fauxToolCall("codemode", { code: wrapped }, { id })], { stopReason: "toolUse" }), script);
    const message = lastToolResult(id);
    const text = textOf(message);
    return { text, isError: message.isError, value: script.verbatim ? extractOutputValue(text) : extractMarkedValue(text) };
  };

  const say = async (userText: string, assistantText: string) => {
    parentSteps.length = 0;
    parentSteps.push(fauxAssistantMessage([fauxText(assistantText)]));
    await session.prompt(`${PARENT_MARKER} ${userText}`);
  };

  return {
    session,
    faux,
    cwd,
    agentDir,
    flowHome,
    callTool,
    callToolsAtOnce,
    runCodemode,
    say,
    queueChildren: (steps) => void childSteps.push(...steps),
    pendingParentSteps: () => parentSteps.length,
    shutdown,
    async dispose() {
      // Once only: a second dispose would put back variables a later session has set since.
      if (disposed) return;
      disposed = true;
      try {
        if (!shutDown) await shutdown();
      } finally {
        restoreEnvironmentAndRemoveFolder();
      }
    },
  };

  async function shutdown(): Promise<void> {
    if (shutDown) return;
    shutDown = true;
    try {
      await session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });
    } finally {
      session.dispose();
    }
  }

  function restoreEnvironmentAndRemoveFolder(): void {
    for (const [key, value] of previousEnv) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    for (const [key, value] of Object.entries(outerDirs)) {
      if (process.env[key] !== (key === "PI_FLOW_HOME" ? flowHome : agentDir)) continue;
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    if (ownsCwd) rmSync(cwd, { recursive: true, force: true });
  }
}

/** A script's only output is its return value, as JSON (or as text when it returned a string). */
function extractOutputValue(text: string): unknown {
  const start = text.indexOf("Output:\n");
  if (start < 0) return undefined;
  const raw = text.slice(start + "Output:\n".length).trim();
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function extractMarkedValue(text: string): unknown {
  const start = text.indexOf(`{"${RESULT_MARKER}"`);
  if (start < 0) return undefined;
  // The returned JSON is one line of its own in the output.
  const end = text.indexOf("\n", start);
  const json = text.slice(start, end < 0 ? undefined : end);
  return (JSON.parse(json) as Record<string, unknown>)[RESULT_MARKER];
}

export type { FauxResponseStep };
