import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PI_DEFAULT_TOOLS } from "../child-tools.ts";
import { codexMcpServerNames, disabledMcpServers, tomlString } from "./codex-mcp.ts";
import { disabledProjectSkills } from "./codex-skills.ts";
import { startsMcpServers } from "./mcp-policy.ts";
import { compareVersions } from "./preflight.ts";
import { argsLine, counter, forgetOldest, isRecord, MAX_HELD_IDS, messageText, requireRecord, shortText, text, type JsonRecord } from "./guards.ts";
import { StreamFormatError, type CliAdapter, type CliLaunch, type CliLaunchInput, type StreamReader, type StreamSink } from "./types.ts";

/**
 * The codex harness: the Codex CLI run as `codex exec --json … -`, the prompt on stdin. Each stdout
 * line is one JSON event (docs/harnesses.md lists the ones read): `thread.started` names the
 * session, `item.*` events carry commands, file changes, tool calls and agent messages,
 * `turn.completed` ends the run with its usage, `turn.failed` fails it. Codex has no flag for a
 * system prompt, so the role's instructions go before the task in the prompt.
 */

/** The diagnostic code of a codex child that holds a writing tool but not bash, so runs read-only. */
export const CODEX_NO_SHELL = "codex_read_only_without_bash";

/**
 * Turns off the programs Codex runs of its own, outside its sandbox: the hooks of its config (a
 * SessionStart or PreToolUse hook is any shell command) and the `notify` program it runs at each
 * turn's end. The hooks feature is `hooks` from Codex 0.130 on, `codex_hooks` before (then the new
 * name turns nothing off, and from 0.130 on the old one adds a deprecation notice to the stream).
 */
const noHooks = (version: string): string[] => ["-c", `features.${compareVersions(version, "0.130.0") < 0 ? "codex_hooks" : "hooks"}=false`, "-c", "notify=[]"];

async function launch({ request, model, readOnly, scratchDir, resumeSessionId, binary, version, env }: CliLaunchInput): Promise<CliLaunch> {
  // Codex's model always has a shell, and in workspace-write it runs any command in the child's
  // folder (the project's scripts and tests included): only a child that holds bash gets it.
  const shell = (request.profile.tools ?? PI_DEFAULT_TOOLS).includes("bash");
  const sandboxReadOnly = readOnly || !shell;
  const args = [
    "exec",
    "--json",
    // pi-flow chose the directory; codex's own "is this a git repository" guard would only refuse it.
    "--skip-git-repo-check",
    `--cd=${request.cwd}`,
    `--sandbox=${sandboxReadOnly ? "read-only" : "workspace-write"}`,
    // Nothing a read-only child runs leaves the sandbox: a .rules `allow` (the user's, or a trusted
    // project's) runs its commands unsandboxed, and under a config's `approval_policy = "on-request"`
    // an escalation is approved by a reviewer model when `approvals_reviewer = "auto_review"`. Nor
    // does it run hooks or a notify program: only a child that holds bash runs programs.
    ...(sandboxReadOnly ? ["--ignore-rules", "-c", 'approval_policy="never"', ...noHooks(version)] : []),
    // workspace-write also writes the `writable_roots` of the user's config.toml or a trusted
    // project's .codex: a child writes in the folder pi-flow gave it (and the temporary folders), no
    // other. A `-c` array replaces the configured one.
    ...(sandboxReadOnly ? [] : ["-c", "sandbox_workspace_write.writable_roots=[]"]),
  ];
  // Codex keeps its own list of trusted projects: one the user trusted in Codex would load its
  // .codex config (MCP servers, .rules) even where Pi does not trust it. So a child of a project
  // Pi does not trust names its folder untrusted, and no .codex folder above it counts. It also
  // skips the user's config.toml, as a claude child there gets no MCP server: the user's MCP
  // servers run outside Codex's sandbox with the user's tokens, for a model that reads the
  // project's files. Its login (auth.json under CODEX_HOME) still counts.
  const ignoreUserConfig = !request.loading.projectTrusted;
  const configArgs = ignoreUserConfig ? ["-c", "project_root_markers=[]", "-c", `projects={${tomlString(request.cwd)}={trust_level="untrusted"}}`] : [];
  // Nor does it get the project's skills, which Codex lists to the model whatever the trust (codex-skills.ts).
  if (ignoreUserConfig) args.push("--ignore-user-config", ...configArgs, ...disabledProjectSkills(request.cwd));
  // A child that may have no MCP server (untrusted, isolated, or read-only naming no MCP tool) gets
  // each server of Codex's config turned off by name: the read-only sandbox does not stop an MCP
  // tool its server's config approves (`default_tools_approval_mode = "approve"`), and the server
  // runs outside the sandbox. Plugins and apps (ChatGPT connectors) bring MCP tools of their own.
  if (!startsMcpServers(request, readOnly)) {
    const noPlugins = ["-c", "features.plugins=false", "-c", "features.apps=false"];
    // Listed with plugins off too: a name only a plugin brings would be a server without a command, which fails the run.
    const listArgs = [...configArgs, ...noPlugins];
    const names = await codexMcpServerNames({ binary, env, cwd: request.cwd, configArgs: listArgs, ignoreUserConfig, scratchDir, signal: request.signal });
    args.push(...noPlugins);
    if (names.length > 0) args.push("-c", disabledMcpServers(names));
  }
  if (model !== undefined) args.push(`--model=${model}`);
  if (request.outputSchema) {
    const file = join(scratchDir, "output-schema.json");
    writeFileSync(file, JSON.stringify(request.outputSchema), { mode: 0o600 });
    args.push(`--output-schema=${file}`);
  }
  // `exec resume <thread id>` continues that thread; its options come before the subcommand.
  if (resumeSessionId !== undefined) args.push("resume", resumeSessionId);
  // `-`: read the prompt from stdin.
  args.push("-");
  const stdin = `<role_instructions>\n${request.profile.systemPrompt}\n</role_instructions>\n\n${request.prompt}`;
  if (readOnly || shell) return { args, stdin };
  const message = "codex runs this child in its read-only sandbox: it holds a writing tool but not bash, and codex cannot write without a shell that runs any command";
  return { args, stdin, narrowed: { code: CODEX_NO_SHELL, message } };
}

/** What an item is, as a tool name for diagnostics and progress; undefined for items that are not tool calls. */
function toolOf(item: JsonRecord): { tool: string; args: string } | undefined {
  switch (item.type) {
    case "command_execution":
      return { tool: "shell", args: argsLine(item.command) };
    case "file_change":
      return {
        tool: "apply_patch",
        args: argsLine(Array.isArray(item.changes) ? item.changes.map((change) => (isRecord(change) ? `${text(change.kind)} ${text(change.path)}` : "?")) : []),
      };
    case "mcp_tool_call":
      return { tool: `${shortText(item.server, "an MCP call's server") ?? "mcp"}.${shortText(item.tool, "an MCP call's tool") ?? "tool"}`, args: argsLine(item.arguments) };
    case "web_search":
      return { tool: "web_search", args: argsLine(item.query) };
    case "collab_tool_call":
      // spawn_agent starts a sub-agent whose own commands this stream does not show: the call is all a quota can count.
      return { tool: `collab.${shortText(item.tool, "a collab call's tool") ?? "tool"}`, args: argsLine(item.prompt ?? item.receiver_thread_ids) };
    default: {
      // Quotas fail closed: a kind of tool item a later codex adds (its type ends in `_call`) is a call too.
      const type = shortText(item.type, "an item's type");
      return type?.endsWith("_call") ? { tool: type, args: "" } : undefined;
    }
  }
}

function failedItem(item: JsonRecord): boolean {
  if (item.status === "failed" || item.status === "declined") return true;
  return item.type === "command_execution" && typeof item.exit_code === "number" && item.exit_code !== 0;
}

/**
 * Tells a tool item's first event from the later events of the same call, so each call counts
 * once, and names the call an event belongs to. An item with an id is that id; one without (the
 * format requires it, a stream may leave it out) is a later event of a call of its kind that
 * started and has not completed, one without an id first, else the oldest with one (whose id it
 * then reports, so its result ends that call's span), else a new call. Only items not completed
 * yet are held (a completed item has no later event), and at most MAX_HELD_IDS of them.
 */
function newCalls(): (phase: string, item: JsonRecord, tool: string) => { isNew: boolean; id?: string } {
  /** Open calls with an id, oldest first: id → tool; and by tool, so an event without an id finds its call at once. */
  const running = new Map<string, string>();
  const runningOf = new Map<string, Set<string>>();
  const close = (id: string) => {
    const ids = runningOf.get(running.get(id)!);
    ids?.delete(id);
    if (ids?.size === 0) runningOf.delete(running.get(id)!);
    running.delete(id);
  };
  const open = new Map<string, number>();
  return (phase, item, tool) => {
    const id = shortText(item.id, "an item's id");
    if (id !== undefined && id !== "") {
      const known = running.has(id);
      if (known && phase === "item.completed") close(id);
      else if (!known && phase !== "item.completed") {
        running.set(id, tool);
        runningOf.set(tool, (runningOf.get(tool) ?? new Set()).add(id));
        for (const oldest of running.keys()) {
          if (running.size <= MAX_HELD_IDS) break;
          close(oldest);
        }
      }
      return { isNew: !known, id };
    }
    const count = open.get(tool) ?? 0;
    if (phase === "item.started") {
      open.set(tool, count + 1);
      forgetOldest(open);
      return { isNew: true };
    }
    if (count > 0) {
      if (phase === "item.completed") {
        if (count > 1) open.set(tool, count - 1);
        else open.delete(tool);
      }
      return { isNew: false };
    }
    const named = runningOf.get(tool)?.values().next().value;
    if (named !== undefined) {
      if (phase === "item.completed") close(named);
      return { isNew: false, id: named };
    }
    if (phase !== "item.completed") {
      open.set(tool, 1);
      forgetOldest(open);
    }
    return { isNew: true };
  };
}

function reader(sink: StreamSink): StreamReader {
  let completed = false;
  let failure: string | undefined;
  let lastError: string | undefined;
  let answer: string | undefined;
  const isNewCall = newCalls();
  const count = counter("codex", (message) => sink.diagnostic({ type: "error", message }));

  const onItem = (phase: string, item: JsonRecord) => {
    const tool = toolOf(item);
    // The call's id ties its completion to its start (isNewCall has checked its length).
    const call = tool ? isNewCall(phase, item, tool.tool) : undefined;
    const id = call?.id;
    if (tool && call?.isNew) {
      sink.usage.toolCalls++;
      sink.diagnostic({ type: "tool_call", tool: tool.tool, args: tool.args, ...(id ? { id } : {}) });
      sink.progress(tool.tool === "shell" ? `running ${tool.args.slice(0, 80)}` : `calling ${tool.tool}`); // args: redacted by argsLine
    }
    if (phase !== "item.completed") {
      if (item.type === "reasoning") sink.progress("thinking");
      return;
    }
    if (tool) sink.diagnostic({ type: "tool_result", tool: tool.tool, isError: failedItem(item), ...(id ? { id } : {}) });
    if (item.type === "agent_message") {
      const said = text(item.text);
      if (said === undefined) throw new StreamFormatError("an agent_message item has no text");
      answer = said;
      if (said.trim().length > 0) sink.output(said);
    } else if (item.type === "error") {
      sink.diagnostic({ type: "error", message: `codex: ${messageText(item.message) ?? "error"}` });
    }
  };

  return {
    onEvent(event) {
      switch (event.type) {
        case "thread.started": {
          const id = shortText(event.thread_id, "a thread_id");
          if (id) sink.session(id);
          return;
        }
        case "turn.started":
          sink.progress("thinking");
          return;
        case "turn.completed": {
          const usage = requireRecord(event.usage, "turn.completed's usage");
          sink.usage.turns++;
          sink.usage.inputTokens += count(usage.input_tokens);
          sink.usage.outputTokens += count(usage.output_tokens);
          completed = true;
          sink.progress("finished");
          return;
        }
        case "turn.failed":
          failure = (isRecord(event.error) ? messageText(event.error.message) : undefined) ?? "no detail";
          return;
        case "error":
          // Also used for notices the CLI recovers from ("Reconnecting..."): kept, fatal only if the turn never completes.
          lastError = messageText(event.message) ?? "error";
          sink.diagnostic({ type: "error", message: `codex: ${lastError}` });
          return;
        case "item.started":
        case "item.updated":
        case "item.completed":
          return onItem(event.type, requireRecord(event.item, `${event.type}'s item`));
        default:
          if (typeof event.type !== "string") throw new StreamFormatError("an event has no type");
      }
    },
    ended: () => completed || failure !== undefined,
    finish(exitCode, signal) {
      if (failure !== undefined) return { ok: false, message: `codex reported a failed turn: ${failure}` };
      if (!completed) {
        const why = lastError ? `: ${lastError}` : "";
        const ended = exitCode === null ? `was ended by ${signal ?? "a signal"}` : `exited with code ${exitCode}`;
        return {
          ok: false,
          message: exitCode === 0 ? `codex's stream ended before turn.completed${why}` : `codex ${ended} before the turn completed${why}`,
        };
      }
      if (answer === undefined) return { ok: false, message: "codex completed its turn without an agent message" };
      return { ok: true, text: answer };
    },
  };
}

export const codexAdapter: CliAdapter = {
  spec: {
    name: "codex",
    product: "Codex CLI",
    command: "codex",
    binVariable: "PI_FLOW_CODEX_BIN",
    install: "npm install -g @openai/codex",
    versionPattern: /codex(?:-cli)?\s+v?(\d+\.\d+\.\d+)/i,
    // Older versions load an untrusted project's .codex config (MCP servers Codex starts outside its
    // sandbox) or its .rules (which can allow commands past the sandbox); 0.122 still starts the
    // user's MCP servers under --ignore-user-config.
    minVersion: "0.123.0",
    ownEnv: ["CODEX_HOME"],
    // `exec resume` has no --fork (codex-rs/exec/src/cli.rs): a resume continues the thread itself.
    forksOnResume: false,
  },
  launch,
  reader,
};
