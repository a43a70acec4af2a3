import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { hasTrustRequiringProjectResources, ProjectTrustStore, SettingsManager } from "@earendil-works/pi-coding-agent";
import { FlowError } from "../contract/errors.ts";
import { processGlobal } from "../../runtime/process-global.ts";

/**
 * Project trust, decided as Pi 1.6 decides it for `pi -p` (no one to ask): a command-line override
 * (`--approve` / `--no-approve`) first; then, for a project with files that need a decision, the
 * nearest saved decision in the agent directory's trust.json (what Pi's /trust writes); then the
 * user's `defaultProjectTrust`, where only "always" trusts. A project with nothing to protect is
 * trusted unless a saved decision says otherwise.
 *
 * pi-flow's own project files that widen a child's authority need a decision too: role files and
 * saved workflows under `.pi/flow/`, and Pi agent definitions in `.pi/agents/`. So do the files a
 * claude or codex child would act on: Claude Code under `-p` asks no one before it runs the
 * project's hooks (`.claude/settings.json`) or reads its MCP servers, and Codex before it reads
 * `.codex/` of a folder the user trusted in Codex.
 */

/** What an untrusted project loses, said to the user wherever its files are left out. */
export const UNTRUSTED_LEFT_OUT = "its .pi extensions, settings, roles, agent definitions and saved workflows, and the Claude Code and Codex settings a child would load there, are left out";

/** Said to the user wherever an untrusted project's files are left out. */
export const TRUST_HINT = "trust it with /trust in pi (saved for later runs), or pass --approve to flow for one command";

/** Folders of the project pi-flow reads children's authority from. */
const FLOW_PROJECT_PATHS = [
  [".pi", "flow", "roles"],
  [".pi", "flow", "workflows"],
  [".pi", "agents"],
] as const;

/**
 * The project files of the CLIs pi-flow runs as children, in the folder or any folder above it
 * (Claude Code and Codex look there too), except the home folder, where they are the user's own.
 * Claude Code's skills, commands and agents are what Pi's project skills, prompts and agent
 * definitions are, which Pi withholds until a project is trusted.
 */
const CLI_PROJECT_PATHS = [
  [".claude", "settings.json"],
  [".claude", "settings.local.json"],
  [".claude", "skills"],
  [".claude", "commands"],
  [".claude", "agents"],
  [".mcp.json"],
  [".codex"],
] as const;

/** The folder as Pi keys it in trust.json: absolute, links resolved. */
export function canonicalDir(dir: string): string {
  try {
    return realpathSync.native(resolve(dir));
  } catch {
    return resolve(dir);
  }
}

/** The home folder, canonical: its own project files are the user's. */
export function homeFolder(): string {
  return canonicalDir(process.env.HOME || homedir());
}

/**
 * Whether the project holds files that widen a child's authority: pi-flow's, or those of the CLIs
 * its claude and codex children run (in any folder above too). Agent definitions in a folder above
 * take that folder's own decision (agentDefinitionsFolderTrusted), not this project's.
 */
export function hasFlowProjectFiles(cwd: string): boolean {
  const dir = canonicalDir(cwd);
  if (FLOW_PROJECT_PATHS.some((parts) => existsSync(join(dir, ...parts)))) return true;
  const home = homeFolder();
  for (let current = dir; ; current = dirname(current)) {
    if (current !== home && CLI_PROJECT_PATHS.some((parts) => existsSync(join(current, ...parts)))) return true;
    if (current === dirname(current)) return false;
  }
}

/** Whether anything in the project waits on a trust decision: Pi's protected resources or pi-flow's own. */
export function needsTrustDecision(cwd: string): boolean {
  return hasTrustRequiringProjectResources(cwd) || hasFlowProjectFiles(cwd);
}

/** The nearest saved decision (Pi's trust.json), or null; a store Pi cannot read is configuration_invalid. */
function savedDecision(cwd: string, agentDir: string): boolean | null {
  try {
    return new ProjectTrustStore(agentDir).get(canonicalDir(cwd));
  } catch (error) {
    throw new FlowError("configuration_invalid", `Pi's trust store cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The saved decision, then defaultProjectTrust, for a project that needs one and has no override. */
function savedOrDefault(cwd: string, agentDir: string): boolean {
  const saved = savedDecision(cwd, agentDir);
  if (saved !== null) return saved;
  return SettingsManager.create(cwd, agentDir, { projectTrusted: false }).getDefaultProjectTrust() === "always";
}

/** Decisions this process already took (the `flow` command's, with its flags), by canonical folder. */
const processDecisions = processGlobal("pi-flow.project-trust", () => new Map<string, boolean>());

/** The decision for a folder with no override: what `pi -p` would decide there. */
function decide(cwd: string, agentDir: string, needed: boolean): boolean {
  if (needed) return savedOrDefault(cwd, agentDir);
  return savedDecision(cwd, agentDir) ?? true;
}

/**
 * Resolves the project's trust for this process, as `pi -p` does, and remembers it: every child
 * and every tool of this process then agrees with it.
 */
export function resolveProjectTrust(cwd: string, agentDir: string, override?: boolean, needed?: boolean): boolean {
  // `needed`: needsTrustDecision(cwd), when the caller asked already (it reads the project's files).
  const trusted = override ?? decide(cwd, agentDir, needed ?? needsTrustDecision(cwd));
  processDecisions.set(canonicalDir(cwd), trusted);
  return trusted;
}

/**
 * Whether a session's project counts as trusted for pi-flow. Pi's answer (`piTrusted`) decides,
 * except where Pi had nothing to decide about but pi-flow does: then this process's decision,
 * else the saved one, else defaultProjectTrust.
 */
export function sessionProjectTrusted(cwd: string, agentDir: string, piTrusted: boolean): boolean {
  if (!piTrusted) return false;
  const decided = processDecisions.get(canonicalDir(cwd));
  if (decided !== undefined) return decided;
  if (hasTrustRequiringProjectResources(cwd) || !hasFlowProjectFiles(cwd)) return true;
  return savedOrDefault(cwd, agentDir);
}

/**
 * Whether a child working in `childCwd` may load that folder's project resources: never when its
 * parent's project is untrusted; in the parent's own folder, as the parent; elsewhere, as that
 * folder's own decision says.
 */
export function childProjectTrusted(parent: { cwd: string; trusted: boolean }, childCwd: string, agentDir: string): boolean {
  if (!parent.trusted) return false;
  if (childCwd === parent.cwd) return true; // the same folder, without resolving it twice per child
  const dir = canonicalDir(childCwd);
  if (dir === canonicalDir(parent.cwd)) return true;
  return processDecisions.get(dir) ?? decide(childCwd, agentDir, needsTrustDecision(childCwd));
}

/**
 * Whether the agent definitions in `folder` (the nearest `.pi/agents` above a project) may be read
 * for that project: never when the project is untrusted; the project's own and the home folder's
 * (the user's) with the project; a shared folder above (one `.pi/agents` over many projects,
 * written by whoever writes there) only by that folder's own decision, as Pi decides a folder's.
 */
export function agentDefinitionsFolderTrusted(project: { cwd: string; trusted: boolean }, folder: string, agentDir: string): boolean {
  if (!project.trusted) return false;
  if (canonicalDir(folder) === homeFolder()) return true;
  return childProjectTrusted(project, folder, agentDir);
}
