import { DEFAULT_LIMITS, LIMIT_CEILINGS, LIMIT_LABELS, LIMIT_NAMES } from "../../runtime/index.ts";

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
  ].join("\n"),
  claude: [
    "claude: Anthropic's Claude Code CLI as a child. Not available in this version: selecting it is harness_unavailable.",
    "When it ships it will run non-interactively with JSONL output after a version preflight; a Flow ref means nothing to it, so hand it bounded text.",
  ].join("\n"),
  codex: [
    "codex: OpenAI's Codex CLI as a child. Not available in this version: selecting it is harness_unavailable.",
    "When it ships it will run non-interactively with JSONL output after a version preflight; a Flow ref means nothing to it, so hand it bounded text.",
  ].join("\n"),
  replay: [
    "replay: children answered from a cassette (a recording of an earlier run, or illustrative answers), with no model and no tokens.",
    "Needs a cassette: PI_FLOW_REPLAY=<file.jsonl> or the Pi setting flow.replay.cassette; without one, selecting it is harness_unavailable.",
    "Answers match by role or agent definition, description, occurrence and a hash of the prompt; flow.replay.mode (PI_FLOW_REPLAY_MODE) loose ignores the prompt.",
    "A child with no matching answer fails, naming its key and the nearest recorded one. Record a cassette with flow run --record <file.jsonl>, or PI_FLOW_RECORD.",
  ].join("\n"),
};

export const HARNESSES_OVERVIEW = [
  "Harnesses decide who runs a child. Ask external_help({ topic: \"harnesses\", harness }) for one.",
  ...Object.entries(HARNESS_HELP).map(([name, text]) => `- ${name}: ${text.split("\n")[0]?.replace(/^[^:]+:\s*/, "")}`),
].join("\n");

export const WORKFLOWS_HELP = `A workflow is JavaScript run in a QuickJS sandbox, saved as a .js file or passed inline as external_workflow's script.

A saved file starts with two literal exports, read without running anything:
  export const apiVersion = 1;
  export const meta = { name: "review", description: "...", args: { type: "object", ... }, limits: { agentCalls: 8, concurrency: 3 }, tools: ["external_runs"] };
An inline script may omit them. The rest runs as the body of an async function: top-level await and return work.

Inside a script:
- args: the validated arguments (meta.args is a JSON Schema).
- agent(options) starts one child (same options as external_delegate) and resolves to { runId, output, value, usage }; a failed child rejects with an Error carrying code and runId. An unknown role or the agent-call limit fails the whole run.
- store(key, value) / load(key): per-run JSON scratch space; never sent to children or the parent.
- tools.<name>(args): the tools meta.tools names, through the parent's tool pipeline.
- helpers: parallel(thunks, { concurrency }), retry(fn, { attempts }), readFinal(run), handoff(evidence, { maxChars, source }).
- console.log and text() write the run's output. No timers, fetch, require, process or import().

Evidence moves only as prompt text you write (explicit handoff). Every child that asks for recent or full context sees the parent as it was when the workflow started, never a sibling's result.
A saved workflow is looked up in the project's .pi/flow/workflows/, then the user's Flow directory (workflows/), then the shipped set: a project file overrides a user file, which overrides a shipped one.
external_help({ topic: "contracts", tool: "external_workflow" }) lists the helper signatures.`;

export const ROLES_HELP = `Roles choose a child's prompt, tools and default context.
Built in: worker (can edit and run commands), explorer (read-only investigation), reviewer (read-only review; independent by default).
Override or add roles with markdown files in the project's .pi/flow/roles/ or the user's Flow roles directory.
subagent_type instead selects a Pi agent definition and always runs on the pi harness.`;

export const ERRORS_HELP = (codes: Record<string, string>) =>
  [
    "ok:false receipts carry error { code, message }. The codes:",
    ...Object.entries(codes).map(([code, meaning]) => `- ${code}: ${meaning}`),
    'Still thrown, not returned: an interrupted wait ("Run wait aborted"), unexpected exceptions, schema or permission failures before execute, tool_call blocks.',
  ].join("\n");

/** Generated from the runtime's own tables, so help can never disagree with what is enforced. */
export const LIMITS_HELP = [
  "Limits fail closed: each has a default and a hard ceiling, and the error names the limit that was hit.",
  "A workflow asks for limits in meta.limits; a value above its ceiling is rejected (script_invalid), not clamped.",
  ...LIMIT_NAMES.map(
    (name) => `- ${name}: the ${LIMIT_LABELS[name]}. Default ${DEFAULT_LIMITS[name]}, ceiling ${LIMIT_CEILINGS[name]}.`,
  ),
  "Workflows may start workflows only to a fixed nesting depth.",
  "A child's answer is inline up to 16 KiB of UTF-8 JSON; larger ones are delivered by reference, never truncated.",
].join("\n");
