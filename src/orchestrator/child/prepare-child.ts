// Every check a child call can fail before launch, in the contract's order, and what it leaves
// ready to launch (a PreparedChild): the delegate tool and a workflow's agent() both call
// prepareChild, then launchChild (launch-child.ts) with what it returns. Nothing here has a side
// effect: a refused call leaves no run behind.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { checkTarget } from "../../contract/child-target.ts";
import { FlowError } from "../../contract/errors.ts";
import { checkContextRequest, renderedContext } from "../../parent-context/modes.ts";
import { redactText, rememberSharedHead } from "../../runs/index.ts";
import { boundChildTools, chooseHarness, outputSchemaProblem } from "../../harnesses/index.ts";
import { isolationRepository } from "../../isolation/index.ts";
import { checkChildCwd } from "./cwd.ts";
import type { ChildCall, LaunchEnvironment, PreparedChild } from "./launch-types.ts";
import { askedHarness, availableRoles, childIsolation, selectProfile } from "./profile.ts";
import { resolveResume } from "./resume-source.ts";


/** The longest a single child may run, whatever it asks for. */
export const MAX_CHILD_TIMEOUT_MS = 6 * 60 * 60 * 1000;

/** external_delegate's schema bounds description; agent() options reach here without Pi's validation. */
const MAX_DESCRIPTION_CHARS = 200;
/** Role, agent definition, harness and model names. */
const MAX_NAME_CHARS = 200;
const MAX_PATH_CHARS = 4096;
const CONTROL = /[\u0000-\u001f\u007f]/;
const NUL = /\u0000/;

/**
 * A short text option: a typed error for what would otherwise surface as raw Node or filesystem
 * text. Names and paths take no control characters; a description only no NUL.
 */
function checkText(value: string | undefined, what: string, max: number, forbidden = CONTROL): void {
  if (value === undefined) return;
  if (value.length > max) throw new FlowError("request_invalid", `${what} is longer than ${max} characters.`);
  if (forbidden.test(value)) throw new FlowError("request_invalid", `${what} contains a control character (NUL, newline, tab, ...).`);
}

/** The child's working directory. Errors quote only what the caller wrote, never the host's absolute path. */
function resolveCwd(requested: string, base: string): string {
  checkText(requested, "cwd", MAX_PATH_CHARS);
  const cwd = resolve(base, requested);
  let isDirectory = false;
  try {
    isDirectory = statSync(cwd, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    // Too long a name, no permission, a loop of links: all mean "not a directory the child can use".
  }
  if (!isDirectory) throw new FlowError("request_invalid", `cwd ${JSON.stringify(requested)} is not a directory.`);
  return cwd;
}

/** A prompt or description of only whitespace passes the schema's minLength but says nothing. */
function checkNotBlank(value: string | undefined, what: string, why: string): void {
  if (value !== undefined && value.trim() === "") throw new FlowError("request_invalid", `${what} is blank: ${why}.`);
}

async function checkRequest(call: ChildCall, env: LaunchEnvironment, signal: AbortSignal | undefined): Promise<string> {
  checkNotBlank(call.prompt, "prompt", "give the child its task");
  checkNotBlank(call.description, "description", "give the run a short label, or leave description out where it is optional");
  checkText(call.description, "description", MAX_DESCRIPTION_CHARS, NUL);
  for (const key of ["role", "subagent_type", "harness", "model"] as const) checkText(call[key], key, MAX_NAME_CHARS);
  checkTarget(call, () => availableRoles(env));
  // Field types and minimums (maxTurns, maxToolCalls, timeoutMs, ...) were checked against the
  // schema already: by Pi for external_delegate, by checkAgentOptions for agent().
  if (call.resume !== undefined && typeof call.resume !== "string") throw new FlowError("request_invalid", "resume must be a run ID.");
  if (call.timeoutMs !== undefined && call.timeoutMs > MAX_CHILD_TIMEOUT_MS) {
    throw new FlowError("request_invalid", `timeoutMs may be at most ${MAX_CHILD_TIMEOUT_MS}.`);
  }
  // In the schema worker: a model's schema of 200,000 names is not walked on Pi's thread.
  const schemaProblem = call.outputSchema === undefined ? undefined : await outputSchemaProblem(call.outputSchema, signal ? { signal } : {});
  if (schemaProblem) throw new FlowError("request_invalid", schemaProblem);
  return call.cwd === undefined ? env.cwd : resolveCwd(call.cwd, env.cwd);
}

/**
 * Whether a child's model is served by the parent's own provider, which has already seen the
 * parent's conversation. Any other (another provider, a claude or codex CLI) gets it with its
 * secrets redacted: a key the user pasted to one provider is not handed to another unasked. What
 * the child must have goes in its prompt, which is the parent's explicit handoff and is sent as is.
 * A child with no model (replay, stub) reads nothing, and keeps the conversation as rendered.
 */
function sameProviderAsParent(model: PreparedChild["model"], parentModel: LaunchEnvironment["parentModel"]): boolean {
  if (model.kind === "none") return true;
  return model.kind === "pi" && parentModel !== undefined && model.model.provider === parentModel.provider;
}

/**
 * The last conversation redacted for a child on another provider, and its redacted form: a call's
 * children share one rendering (renderedContext), so a fan-out of claude children redacts it once.
 */
let lastRedacted: { rendered: string; redacted: string } | undefined;

function redactedContext(rendered: string): string {
  if (rendered === "") return rendered;
  if (lastRedacted?.rendered !== rendered) lastRedacted = { rendered, redacted: redactText(rendered).text };
  return lastRedacted.redacted;
}

/**
 * Every check that can fail before launch, in the contract's order, with no side effect:
 * contradictions, then selection, then harness, then model, then context. Asynchronous for worktree
 * isolation, whose repository check runs git, and a CLI harness's preflight, which runs its
 * `--version`: neither blocks the host, and `signal` (the call's abort) ends the preflight.
 */
export async function prepareChild(call: ChildCall, env: LaunchEnvironment, signal?: AbortSignal): Promise<PreparedChild> {
  const cwd = await checkRequest(call, env, signal);
  const profile = selectProfile(call, env);
  const tools = boundChildTools(profile, env.parentTools);
  if (call.cwd !== undefined) checkChildCwd(call.cwd, cwd, { projectCwd: env.cwd, parentTools: env.parentTools, childTools: tools.effective });
  const resume = call.resume === undefined ? undefined : resolveResume(call.resume, env.runs, env.supervised !== false);
  const asked = askedHarness(call, profile, resume);
  const isolated = childIsolation(call, profile, asked);
  const worktree = await isolationRepository(call.isolation, profile.isolation, cwd, env.runs.scope.home);
  const keptChangesMax = worktree ? env.keptChangesMax?.() : undefined;
  const chosen = await chooseHarness(asked, call.model ?? profile.model, { settings: env.harnesses, parentModel: env.parentModel, registry: env.modelRegistry, ...(signal ? { signal } : {}) });
  const context = call.context === undefined ? profile.defaultContext : checkContextRequest(call.context);
  // Reading the parent's whole branch costs O(branch); a child that sees none of it skips it.
  const snapshot = context.mode === "none" ? undefined : env.snapshot();
  const rendered = snapshot ? renderedContext(snapshot, context) : "";
  const parentContext = sameProviderAsParent(chosen.model, env.parentModel) ? rendered : redactedContext(rendered);
  // Every child of the call begins its prompt with this text: its records redact it once.
  rememberSharedHead(parentContext);
  const prompt = parentContext === "" ? call.prompt : `${parentContext}\n\n<task>\n${call.prompt}\n</task>`;
  const contextMode = context.mode === "recent" ? `recent:${context.turns}` : context.mode;
  return { call, profile, ...chosen, cwd, isolated, ...(worktree ? { worktree } : {}), ...(keptChangesMax ? { keptChangesMax } : {}), prompt, contextMode, tools, ...(resume ? { resume } : {}) };
}
