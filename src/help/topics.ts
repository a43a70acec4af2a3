import { DEFAULT_LIMITS, LIMIT_CEILINGS, LIMIT_LABELS, LIMIT_NAMES, NESTED_MEMORY_BYTES } from "../../runtime/index.ts";
import type { RoleInfo, SavedWorkflowInfo } from "../orchestrator/workflow/index.ts";
import { capText } from "../../runtime/text.ts";
import { MAX_WORKFLOW_DEPTH } from "../orchestrator/workflow/index.ts";
import { backgroundLimit, backgroundQueueLimit, MAX_CHILD_TIMEOUT_MS, MAX_STEER_CHARS } from "../orchestrator/child/index.ts";
import { DEFAULT_WAIT_BYTES, MAX_WAIT_TARGETS } from "../orchestrator/session/index.ts";
import {
  DEFAULT_LIST_INLINE_BYTES,
  DEFAULT_LIST_LIMIT,
  DEFAULT_PAGE_BYTES,
  MAX_BATCH_TARGETS,
  MAX_LIST_LIMIT,
  MAX_PAGE_BYTES,
} from "../runs/index.ts";

/**
 * The prose topics of external_help. Each text is what a model or user needs to act, kept short;
 * the longer versions live in docs/.
 */

export const HARNESS_HELP: Record<string, string> = {
  pi: [
    "pi (default): the child is an in-process Pi AgentSession.",
    "It uses the parent's model and model runtime unless a role or model chooses another, so every provider the parent can use works for it.",
    "Tools come from the role; context (none, recent N, full) is selected from the parent's branch frozen when the call starts.",
    "subagent_type always runs here.",
    "Quotas maxTurns/maxToolCalls are enforced in the child's loop: a call past the quota is blocked before it runs and the run fails naming it.",
    "Steerable: external_runs steer queues a message for its next model request (after its active tool calls). Resumable: its Pi session is kept with the run, so resume: runId continues it with its whole history.",
    "Its bash gets this process's environment without secret-looking variables (ANTHROPIC_API_KEY, GH_TOKEN, a URL with a password) and never pi-flow's own credentials: add names to PI_FLOW_PI_ENV to pass them. Whatever its commands started is killed when it settles.",
  ].join("\n"),
  claude: [
    "claude: Anthropic's Claude Code CLI as a child: claude -p --output-format=stream-json --verbose, the prompt on stdin.",
    "Read-only roles (tools only read, grep, find, ls: explorer, reviewer) run in its plan mode; other roles get their tools pre-approved and everything else denied (dontAsk).",
    "model is Claude Code's own name (sonnet, opus, claude-sonnet-4-5); an anthropic/ prefix is dropped. outputSchema goes to --json-schema.",
    "Preflight: PI_FLOW_CLAUDE_BIN or claude on PATH, and claude --version 2.0.34 or later; otherwise selecting it is harness_unavailable.",
    "Its environment is an allowlist: add ANTHROPIC_API_KEY or other names to PI_FLOW_CLI_ENV or PI_FLOW_CLAUDE_ENV to pass them. Its session id is in the run's diagnostics (cli_session).",
    "resume: runId continues that session (--resume). Quotas are counted from its stream and end its process group. It cannot be steered (steer answers status unsupported): cancel it, wait for it, then resume it.",
    "A Flow ref means nothing to it: hand it bounded text.",
  ].join("\n"),
  codex: [
    "codex: OpenAI's Codex CLI as a child: codex exec --json, the prompt (after the role's instructions) on stdin.",
    "A child that holds bash runs in --sandbox workspace-write; any other (explorer, reviewer, or a child whose parent holds no bash) in read-only, with a codex_read_only_without_bash warning when it held another writing tool.",
    "model is Codex's own name (gpt-5-codex); an openai/ prefix is dropped. outputSchema goes to --output-schema.",
    "Preflight: PI_FLOW_CODEX_BIN or codex on PATH, and codex --version 0.123.0 or later; otherwise selecting it is harness_unavailable.",
    "Its environment is an allowlist: add OPENAI_API_KEY or other names to PI_FLOW_CLI_ENV or PI_FLOW_CODEX_ENV to pass them. Its thread id is in the run's diagnostics (cli_session).",
    "resume: runId continues that thread (codex exec resume). Quotas are counted from its stream (one turn per prompt, so maxToolCalls is the useful one) and end its process group. It cannot be steered (steer answers status unsupported): cancel it, wait for it, then resume it.",
    "A Flow ref means nothing to it: hand it bounded text.",
  ].join("\n"),
  replay: [
    "replay: children answered from a cassette (a recording of an earlier run, or illustrative answers), with no model and no tokens.",
    "Needs a cassette: PI_FLOW_REPLAY=<file.jsonl> or the Pi setting flow.replay.cassette; without one, selecting it is harness_unavailable.",
    "Answers match by role or agent definition, description, occurrence and a hash of the prompt; flow.replay.mode (PI_FLOW_REPLAY_MODE) loose ignores the prompt.",
    "A child with no matching answer fails, naming its key and the nearest recorded one. Record a cassette with flow run --record <file.jsonl>, or PI_FLOW_RECORD; write one by hand (loose replay), or start from flow run --stub --record <file.jsonl>.",
    'A child with isolation "worktree" has its changes recorded too (the entry\'s changes: a git patch); replay plays them into the replayed child\'s own worktree before it answers, never into a tree that is not its own.',
  ].join("\n"),
  stub: [
    "stub: children answered at once with no model: a value generated from the child's outputSchema that satisfies it, or a text naming the call; for trying a workflow's control flow, schemas and merge step before spending a token.",
    "Values are the same for the same seed: flow run --stub --seed N, or the Pi setting flow.stub { seed, every } (true: every child, seed 0); harness: \"stub\" stubs one child.",
    "Its runs are marked: warning stubbed on the receipt (and on an external_runs wait that returns one, with a line naming it, as in a background run's completion message), a stubbed diagnostic on each child, harness stub and model null in its launch evidence.",
    "A schema no generated value satisfies fails the child and says so. flow run --stub --record <file.jsonl> writes the answers as a cassette to edit into real ones.",
  ].join("\n"),
};

/** One line per harness: what it is, and its state now when `state` can tell. */
export const harnessesOverview = (state?: (name: string) => string): string =>
  [
    'Harnesses decide who runs a child. Ask external_help({ topic: "harnesses", harness }) for one.',
    ...Object.entries(HARNESS_HELP).map(([name, text]) => {
      const what = text.split("\n")[0]?.replace(/^[^:]+:\s*/, "") ?? "";
      return `- ${name}: ${what}${state ? ` [${state(name)}]` : ""}`;
    }),
  ].join("\n");

const WORKFLOWS_GUIDE = `A workflow is JavaScript run in a QuickJS sandbox, saved as a .js file or passed inline as external_workflow's script.

A saved file starts with two literal exports, read without running anything:
  export const apiVersion = 1;
  export const meta = { name: "review", description: "...", args: { type: "object", ... }, limits: { agentCalls: 8, concurrency: 3 }, tools: ["external_runs"] };
An inline script may omit them. The rest runs as the body of an async function (top-level await and return work), or, when the file has export default async function ({ args }) { ... }, the top level runs and then that function, whose return value is the result.

Inside a script:
- args: the validated arguments (meta.args is a JSON Schema).
- agent(options) starts one child (same options as external_delegate) and resolves to { runId, output, value, usage }; a failed child rejects with an Error carrying code and runId. An unknown role or the agent-call limit fails the whole run.
- store(key, value) / load(key): per-run JSON scratch space; never sent to children or the parent.
- tools.<name>(args): the tools meta.tools names, through the parent's tool pipeline, and always external_help and external_runs's list, inspect and wait (its cancel, steer, apply and discard need meta.tools to name external_runs). describeTool(name) and searchTools(query) give their TypeScript declarations, as in codemode.
- helpers: parallel(thunks, { concurrency }), retry(fn, { attempts }), readFinal(run), handoff(evidence, { maxChars, source }).
- console.log and text() write the run's output. No timers, fetch, require, process or import().

Evidence moves only as prompt text you write (explicit handoff). Every child that asks for recent or full context sees the parent as it was when the workflow started, never a sibling's result.
A saved workflow is looked up in the project's .pi/flow/workflows/, then the user's Flow directory (workflows/), then the shipped set: a project file overrides a user file, which overrides a shipped one. An untrusted project's files are not read (Pi's /trust trusts it).
A run that was interrupted (a crash, a quit) or cancelled continues with external_workflow({ resume: runId }): the script runs again with the same args, seed and clock, and every agent() and tools.* call that had settled is answered from the journal without running. Scripts that react to the order children finish in (Promise.race) are not replay-exact.
external_help({ topic: "contracts", tool: "external_workflow" }) lists the helper signatures.`;

/**
 * What the guide's list shows of each saved workflow, and how many it lists: the answer goes into
 * the model's context whole, and a project's files may hold any number of workflows, each a
 * description and an args schema of up to a megabyte. The structured answer keeps them whole.
 */
const MAX_LISTED_WORKFLOWS = 100;
const MAX_WORKFLOW_DESCRIPTION_CHARS = 500;
const MAX_WORKFLOW_ARGS_CHARS = 2_000;

/** The guide, then every saved workflow this session can run, with its arguments' schema (each cut short past its bound). */
export function workflowsHelp(workflows?: readonly SavedWorkflowInfo[]): string {
  if (!workflows) return WORKFLOWS_GUIDE;
  const lines = workflows.slice(0, MAX_LISTED_WORKFLOWS).map((workflow) => {
    if (workflow.problem) return `- ${workflow.name} (${workflow.source}): cannot run: ${capText(workflow.problem, MAX_WORKFLOW_DESCRIPTION_CHARS)}`;
    const args = workflow.args === undefined ? "any object" : capText(JSON.stringify(workflow.args), MAX_WORKFLOW_ARGS_CHARS);
    return `- ${workflow.name} (${workflow.source}): ${capText(workflow.description ?? "no description", MAX_WORKFLOW_DESCRIPTION_CHARS)} args: ${args}`;
  });
  const more = workflows.length - lines.length;
  if (more > 0) lines.push(`… and ${more} more saved workflows (the structured answer's workflows lists them all)`);
  return [WORKFLOWS_GUIDE, "", "Saved workflows here (run with external_workflow({ workflow: name, args })):", ...(lines.length > 0 ? lines : ["(none)"])].join("\n");
}

const ROLE_FILE_FORMAT = `A role file is markdown: frontmatter, then the child's system prompt as the body, e.g.
  ---
  name: security-reviewer
  description: Reviews for security flaws, read-only.
  tools: read, grep, find, ls
  disallowedTools: bash    (optional: never given, whatever the parent holds)
  context: none            (none, full, or recent:N)
  model: anthropic/claude-sonnet-4-5   (optional)
  harness: pi              (optional: pi, claude, codex)
  isolated: true           (optional: no ambient extension or MCP server; pi harness only)
  isolation: worktree      (optional: the child works in its own git worktree; apply its changes with external_runs apply)
  ---
  You review code for security flaws...
Put it in the project's .pi/flow/roles/<name>.md or the user's Flow roles directory ($PI_FLOW_HOME/roles/). A project file overrides a user file, which overrides a built-in role of the same name; an override inherits what it does not say. An untrusted project's role files and agent definitions are not read (Pi's /trust trusts it).
subagent_type instead selects a Pi agent definition (.pi/agents/ or Pi's agents/) and always runs on the pi harness.
A child never outranks this session: it gets its role's tools only where this session holds them now (grep, find and ls come with read), minus disallowedTools. Tools withheld that way are named in the receipt (warning tools_withheld); without write, edit and bash, claude and codex children run read-only. A cwd outside this session's working directory needs this session to hold bash, and a writing child never gets a filesystem root.`;

/**
 * What the roles list shows of each role, and how many it lists, as for saved workflows: a
 * project's role files may be any number, each a description and a tools list of any length.
 */
const MAX_LISTED_ROLES = 100;
const MAX_ROLE_DESCRIPTION_CHARS = 500;
const MAX_ROLE_TOOLS_CHARS = 500;

function roleLine(role: RoleInfo): string {
  if (role.problem) return `- ${role.name} (${role.source}): cannot be used: ${capText(role.problem, MAX_ROLE_DESCRIPTION_CHARS)}`;
  const tools = role.tools ? ` Tools: ${capText(role.tools.join(", "), MAX_ROLE_TOOLS_CHARS)}.` : " Tools: Pi's defaults.";
  return `- ${role.name} (${role.source}): ${capText(role.description, MAX_ROLE_DESCRIPTION_CHARS)}${tools}`;
}

/** The roles available here (the first MAX_LISTED_ROLES, each cut short past its bounds), then the role file format. */
export function rolesHelp(roles?: readonly RoleInfo[]): string {
  const lines = roles
    ? roles.slice(0, MAX_LISTED_ROLES).map(roleLine)
    : [
        "- worker (builtin): can edit files and run commands.",
        "- explorer (builtin): read-only investigation.",
        "- reviewer (builtin): read-only review; independent by default.",
      ];
  const more = (roles?.length ?? 0) - lines.length;
  if (more > 0) lines.push(`… and ${more} more roles (the structured answer's roles lists them all)`);
  return ["Roles choose a child's system prompt, tools and default context. Available here:", ...lines, "", ROLE_FILE_FORMAT].join("\n");
}

export const ERRORS_HELP = (codes: Record<string, string>, warnings: Record<string, string>) =>
  [
    "ok:false receipts carry error { code, message }. The codes:",
    ...Object.entries(codes).map(([code, meaning]) => `- ${code}: ${meaning}`),
    'Still thrown, not returned: an interrupted wait ("Run wait aborted"), unexpected exceptions, schema or permission failures before execute, tool_call blocks, and a call aborted before its run launched (an AbortError; no run is created).',
    "Any receipt, ok or not, may carry warnings (strings); unknown ones can be ignored. The warnings:",
    ...Object.entries(warnings).map(([warning, meaning]) => `- ${warning}: ${meaning}`),
  ].join("\n");

/** Generated from the runtime's own tables, so help can never disagree with what is enforced. */
export const LIMITS_HELP = [
  "Limits fail closed: each has a default and a hard ceiling, and the error names the limit that was hit.",
  "A workflow asks for limits in meta.limits; a value above its ceiling is rejected (script_invalid), not clamped.",
  ...LIMIT_NAMES.map(
    (name) => `- ${name}: the ${LIMIT_LABELS[name]}. Default ${DEFAULT_LIMITS[name]}, ceiling ${LIMIT_CEILINGS[name]}.`,
  ),
  `- nesting depth: a workflow may start workflows (tools.external_workflow) to depth ${MAX_WORKFLOW_DEPTH}, the root being depth 1. Fixed, not a meta.limits entry.`,
  `- a tree of workflows: a nested workflow has limits of its own, and its agent() and tools.* calls also count against its root's agentCalls and toolCalls. Nested runs alive at once hold at most ${NESTED_MEMORY_BYTES} bytes together, each charged its memoryBytes plus 64 MiB of worker room; one that does not fit waits for a sibling to settle.`,
  `Per child (external_delegate and agent() options): maxTurns and maxToolCalls; the first turn or tool call past one stops the child and the run fails with a message naming the quota. timeoutMs bounds its wall time: timeoutMs at most ${MAX_CHILD_TIMEOUT_MS} (six hours).`,
  `Background runs of one session: ${backgroundLimit({})} run at once (PI_FLOW_MAX_BACKGROUND), children and workflows each; up to ${backgroundQueueLimit({})} more wait for a slot (PI_FLOW_MAX_QUEUED), past that a launch is request_invalid.`,
  `Supervision (external_runs), each over its bound request_invalid: inspect takes at most ${MAX_BATCH_TARGETS} runIds (summary), wait at most ${MAX_WAIT_TARGETS}; list rows per stream: default ${DEFAULT_LIST_LIMIT}, at most ${MAX_LIST_LIMIT}; a steer message at most ${MAX_STEER_CHARS} characters.`,
  `limitBytes defaults: a page ${DEFAULT_PAGE_BYTES}, a wait ${DEFAULT_WAIT_BYTES}, each list stream's inline values ${DEFAULT_LIST_INLINE_BYTES}; whatever it asks, a page, a batch or a wait's text spends at most ${MAX_PAGE_BYTES} bytes.`,
  "A child's answer is inline up to 16 KiB of UTF-8 JSON; larger ones are delivered by reference, never truncated.",
].join("\n");
