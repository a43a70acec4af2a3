import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { usageAmount } from "../../contract/run-schema.ts";
import { argsLine, counter, forgetOldest, isRecord, MAX_HELD_IDS, messageText, requireArray, requireRecord, shortText, text, type JsonRecord } from "./guards.ts";
import { startsMcpServers } from "./mcp-policy.ts";
import { StreamFormatError, type CliAdapter, type CliLaunch, type CliLaunchInput, type StreamReader, type StreamSink } from "./types.ts";

/**
 * The claude harness: Claude Code run as `claude -p --output-format=stream-json --verbose`, the
 * prompt on stdin. Each stdout line is one JSON message (docs/harnesses.md lists the ones read):
 * `system`/`init` opens the session, `assistant` messages carry text and `tool_use` blocks,
 * `user` messages carry `tool_result` blocks, and one `result` message ends the run with the
 * answer, usage and cost.
 */

/** Pi's tool names in a role → Claude Code's. Other names pass as they are (Claude Code's own). */
export const CLAUDE_TOOLS: Record<string, string> = {
  read: "Read",
  bash: "Bash",
  edit: "Edit",
  write: "Write",
  grep: "Grep",
  find: "Glob",
  ls: "LS",
};

/** Claude Code's tools that change files or run commands. */
const CLAUDE_WRITING_TOOLS = ["Bash", "Edit", "Write", "NotebookEdit"];

/** What a role without a tools list gets: Pi's default tools. */
const PI_DEFAULT_TOOLS = ["read", "bash", "edit", "write"];

// Own keys only: a tool named `constructor` is that name, not Object.prototype's method.
const claudeName = (tool: string): string => (Object.hasOwn(CLAUDE_TOOLS, tool) ? CLAUDE_TOOLS[tool]! : tool);

/** A name or pattern Claude Code reads as one: no list (comma, blank), no permission rule (parenthesis). */
const oneName = (name: string): boolean => !/[\s,()]/.test(name);

export function claudeTools(tools: readonly string[] | undefined): string[] {
  const names = (tools ?? PI_DEFAULT_TOOLS).map(claudeName);
  // Claude Code splits a tool list at commas and blanks and reads parentheses as a permission rule:
  // a parent's tool named `x,Bash` would hand the child Bash. `--tools=default` means every
  // built-in tool. Such a name is no tool Claude Code has anyway.
  return [...new Set(names.filter((name) => oneName(name) && name.toLowerCase() !== "default"))];
}

/**
 * The tool a deny entry names. A Claude Code permission rule (`Bash(rm:*)`, `Write(./secrets/**)`)
 * denies its whole tool: no harness can hold a child to part of a tool, and keeping the tool would
 * grant what the rule's author meant to take away.
 */
export const deniedTool = (entry: string): string => /^([^(]+)\(.*\)$/s.exec(entry)?.[1]!.trim() ?? entry;

/**
 * The profile's disallowedTools in Claude Code's names, each a whole tool (a permission rule's
 * tool, as child-tools.ts reads it). `--tools` leaves out Claude Code's MCP tools, which the user's
 * own settings may pre-approve: only `--disallowedTools` holds such a child to its role's deny list.
 */
export function claudeDenied(disallowed: readonly string[] | undefined): string[] {
  return (disallowed ?? []).map(deniedTool).map(claudeName).filter(oneName);
}

/**
 * The task as Claude Code reads it. A prompt whose first character is `/` would be a slash command:
 * a skill, or a command file whose !`…` lines run shell commands before the model is asked. The
 * prompt is the parent's words, so a blank goes before it (Claude Code 2.1.197 then sends it as text).
 */
const claudePrompt = (prompt: string): string => (prompt.startsWith("/") ? ` ${prompt}` : prompt);

function launch({ request, model, readOnly, scratchDir, resumeSessionId }: CliLaunchInput): CliLaunch {
  const toolList = claudeTools(request.profile.tools);
  const tools = toolList.join(",");
  // A read-only child also has Claude Code's writing tools taken away by name, whatever the mode allows.
  const denied = [...new Set([...(readOnly ? CLAUDE_WRITING_TOOLS : []), ...claudeDenied(request.profile.disallowedTools)])];
  const task = claudePrompt(request.prompt);
  // Hooks (the user's, a trusted project's, a plugin's) are shell commands Claude Code runs of its
  // own, at start and around tool calls: only a child that holds Bash runs programs.
  const runsPrograms = toolList.includes("Bash") && !denied.includes("Bash");
  // The MCP servers of the user's and project's settings: not for an untrusted or isolated child,
  // nor for a read-only one whose tools name no MCP tool.
  const mcpServers = startsMcpServers(request, readOnly);
  // The role's prompt goes in a private file, as the task goes on stdin: a command line is visible
  // to every user's `ps`, and one argument longer than 128 KiB would keep Claude Code from starting.
  const systemPromptFile = join(scratchDir, "system-prompt.md");
  writeFileSync(systemPromptFile, request.profile.systemPrompt, { mode: 0o600 });
  const args = [
    "-p",
    "--output-format=stream-json",
    "--verbose",
    // plan: Claude Code's read-only mode. dontAsk: only the role's pre-approved tools run, the rest
    // are denied (a non-interactive run cannot ask anyone).
    `--permission-mode=${readOnly ? "plan" : "dontAsk"}`,
    `--tools=${tools}`,
    `--allowedTools=${tools}`,
    ...(denied.length > 0 ? [`--disallowedTools=${denied.join(",")}`] : []),
    `--append-system-prompt-file=${systemPromptFile}`,
    // Under -p Claude Code skips its trust dialog and loads the project's settings (whose hooks run
    // commands) and MCP servers: a child of a project Pi does not trust gets the user's settings only.
    ...(request.loading.projectTrusted ? [] : ["--setting-sources=user"]),
    ...(mcpServers ? [] : ["--strict-mcp-config"]),
    // Flag settings outrank the user's, project's and local settings (checked with Claude Code 2.1.197).
    ...(runsPrograms ? [] : [`--settings=${JSON.stringify({ disableAllHooks: true })}`]),
  ];
  if (model !== undefined) args.push(`--model=${model}`);
  // A resume forks: the prompt is the next user message of the conversation, in a session of its own
  // (a new id), so the run resumed from stays as it ended. Without --fork-session two resumes of one
  // run would write one session, and the second would see the first's turns (pi copies its session too).
  if (resumeSessionId !== undefined) args.push(`--resume=${resumeSessionId}`, "--fork-session");
  if (!request.outputSchema) return { args, stdin: task };
  const schemaFlag = `--json-schema=${JSON.stringify(request.outputSchema)}`;
  if (Buffer.byteLength(schemaFlag, "utf8") <= MAX_SCHEMA_FLAG_BYTES) return { args: [...args, schemaFlag], stdin: task };
  // --json-schema takes the schema itself, never a file. A longer one goes on stdin as the Agent SDK
  // passes it: stdin becomes SDK messages, an `initialize` request carrying the schema, then the
  // prompt as the user message (Claude Code answers the request with a control_response line).
  args.push("--input-format=stream-json");
  const initialize = { type: "control_request", request_id: "pi-flow-initialize", request: { subtype: "initialize", jsonSchema: request.outputSchema } };
  const prompt = { type: "user", session_id: "", message: { role: "user", content: task }, parent_tool_use_id: null };
  return { args, stdin: `${JSON.stringify(initialize)}\n${JSON.stringify(prompt)}\n` };
}

/**
 * The longest `--json-schema=…` flag passed on the command line. Linux refuses one argument over
 * 128 KiB (MAX_ARG_STRLEN) and Windows a whole command line over 32 K characters; well below both.
 */
const MAX_SCHEMA_FLAG_BYTES = 16 * 1024;

/** Token totals of a `result` message: modelUsage covers every model call, usage only the main loop. */
function resultUsage(result: JsonRecord, count: (value: unknown) => number): { input: number; output: number } | undefined {
  if (isRecord(result.modelUsage) && Object.keys(result.modelUsage).length > 0) {
    let input = 0;
    let output = 0;
    for (const model of Object.values(result.modelUsage)) {
      if (!isRecord(model)) continue;
      input += count(model.inputTokens) + count(model.cacheReadInputTokens) + count(model.cacheCreationInputTokens);
      output += count(model.outputTokens);
    }
    return { input, output };
  }
  if (!isRecord(result.usage)) return undefined;
  const usage = result.usage;
  return {
    input: count(usage.input_tokens) + count(usage.cache_read_input_tokens) + count(usage.cache_creation_input_tokens),
    output: count(usage.output_tokens),
  };
}

/**
 * A block that calls a tool: `tool_use`, and, as quotas fail closed, the Messages API's other kinds
 * (`server_tool_use` for a tool the API runs, `mcp_tool_use` for an MCP connector's).
 */
const isToolUse = (type: unknown): boolean => typeof type === "string" && (type === "tool_use" || type.endsWith("_tool_use"));

function reader(sink: StreamSink): StreamReader {
  let result: JsonRecord | undefined;
  let sessionId: string | undefined;
  // One API response arrives as several `assistant` messages (one per content block) with one id,
  // one after another: only the latest responses are held (forgetOldest), their number is counted.
  const responses = new Map<string, { input: number; output: number }>();
  let turns = 0;
  const totals = { input: 0, output: 0 };
  // Tool calls still running, by id: a call is forgotten at its result (or, never answered, once MAX_HELD_IDS newer ones run).
  const toolNames = new Map<string, string>();
  // Calls without an id (the format requires one; a stream may leave it out), oldest first: a result without one answers the oldest.
  const unnamedCalls: string[] = [];
  const count = counter("claude", (message) => sink.diagnostic({ type: "error", message }));

  const noteSession = (event: JsonRecord) => {
    const id = shortText(event.session_id, "a session_id");
    if (id && sessionId === undefined) {
      sessionId = id;
      sink.session(id);
    }
  };

  const onAssistant = (event: JsonRecord) => {
    const message = requireRecord(event.message, "an assistant message's message");
    const topLevel = event.parent_tool_use_id === null || event.parent_tool_use_id === undefined;
    const id = shortText(message.id, "an assistant message's id");
    if (topLevel && id !== undefined) {
      // Running totals: a later message of the same response replaces its usage. Summing every
      // response again at each message would make a long stream quadratic, and hold the host.
      const before = responses.get(id);
      if (isRecord(message.usage) || before === undefined) {
        const usage = isRecord(message.usage) ? message.usage : {};
        const now = {
          input: count(usage.input_tokens) + count(usage.cache_read_input_tokens) + count(usage.cache_creation_input_tokens),
          output: count(usage.output_tokens),
        };
        if (before === undefined) turns++;
        responses.set(id, now);
        forgetOldest(responses);
        totals.input += now.input - (before?.input ?? 0);
        totals.output += now.output - (before?.output ?? 0);
      }
      sink.usage.turns = turns;
      sink.usage.inputTokens = totals.input;
      sink.usage.outputTokens = totals.output;
    }
    for (const block of requireArray(message.content, "an assistant message's content")) {
      if (!isRecord(block)) continue;
      if (block.type === "text" && topLevel) {
        const said = text(block.text);
        if (said && said.trim().length > 0) sink.output(said);
      } else if (isToolUse(block.type)) {
        const name = shortText(block.name, "a tool call's name") ?? "tool";
        const callId = shortText(block.id, "a tool call's id");
        if (callId) {
          toolNames.set(callId, name);
          forgetOldest(toolNames);
        } else if (unnamedCalls.push(name) > MAX_HELD_IDS) unnamedCalls.shift();
        sink.usage.toolCalls++;
        sink.diagnostic({ type: "tool_call", tool: name, args: argsLine(block.input), ...(callId ? { id: callId } : {}) });
        sink.progress(`calling ${name}`);
      }
    }
    const error = messageText(event.error);
    if (error) sink.diagnostic({ type: "error", message: `claude: ${error}` });
  };

  const onUser = (event: JsonRecord) => {
    const message = requireRecord(event.message, "a user message's message");
    if (!Array.isArray(message.content)) return;
    for (const block of message.content) {
      if (!isRecord(block) || block.type !== "tool_result") continue;
      const callId = shortText(block.tool_use_id, "a tool result's call id") ?? "";
      const tool = (callId ? toolNames.get(callId) : unnamedCalls.shift()) ?? "tool";
      toolNames.delete(callId); // a call has one result: only calls still running are kept
      sink.diagnostic({ type: "tool_result", tool, isError: block.is_error === true, ...(callId ? { id: callId } : {}) });
      sink.progress("thinking");
    }
  };

  const onResult = (event: JsonRecord) => {
    result = event;
    const usage = resultUsage(event, count);
    if (usage) {
      sink.usage.inputTokens = usage.input;
      sink.usage.outputTokens = usage.output;
    }
    if (typeof event.num_turns === "number") sink.usage.turns = Math.max(sink.usage.turns, count(event.num_turns));
    if (typeof event.total_cost_usd === "number") sink.usage.costUsd = usageAmount(event.total_cost_usd);
    sink.progress("finished");
  };

  return {
    onEvent(event) {
      noteSession(event);
      switch (event.type) {
        case "system":
          if (event.subtype === "init") sink.progress(`started${text(event.model) ? ` on ${text(event.model)}` : ""}`);
          return;
        case "assistant":
          return onAssistant(event);
        case "user":
          return onUser(event);
        case "result":
          return onResult(event);
        default:
          // Newer message types (status, hooks, retries…) say nothing the run needs.
          if (typeof event.type !== "string") throw new StreamFormatError("a message has no type");
      }
    },
    ended: () => result !== undefined,
    finish(exitCode, signal) {
      if (!result) {
        const ended = exitCode === null ? `was ended by ${signal ?? "a signal"}` : `exited with code ${exitCode}`;
        return {
          ok: false,
          message: exitCode === 0 ? "claude's stream ended before its result message" : `claude ${ended} before its result message`,
        };
      }
      const subtype = text(result.subtype) ?? "unknown";
      if (subtype !== "success" || result.is_error === true) {
        const errors = Array.isArray(result.errors) ? result.errors.filter((error) => typeof error === "string") : [];
        const detail = messageText(result.result) ?? (errors.length > 0 ? messageText(errors.join("; ")) : "no detail");
        return { ok: false, message: `claude reported an error (${subtype}): ${detail}` };
      }
      const answer = text(result.result);
      if (answer === undefined) throw new StreamFormatError("the success result has no result text");
      return { ok: true, text: answer, ...("structured_output" in result ? { structured: { value: result.structured_output } } : {}) };
    },
  };
}

export const claudeAdapter: CliAdapter = {
  spec: {
    name: "claude",
    product: "Claude Code",
    command: "claude",
    binVariable: "PI_FLOW_CLAUDE_BIN",
    install: "npm install -g @anthropic-ai/claude-code",
    versionPattern: /(\d+\.\d+\.\d+)\S*\s+\(Claude Code\)/,
    // 2.0.34 added --append-system-prompt-file.
    minVersion: "2.0.34",
    ownEnv: ["CLAUDE_CONFIG_DIR"],
    forksOnResume: true,
  },
  launch,
  reader,
};
