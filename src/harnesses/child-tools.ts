// A child never outranks the session that starts it: its tools are its profile's tools within the
// parent session's active tools at the call, minus its profile's disallowedTools. Every harness
// receives the result (pi as the child's tool list, claude and codex as permission flags).
import { CLAUDE_TOOLS, deniedTool } from "./cli/claude.ts";
import type { ChildProfile } from "./profiles.ts";

/** What a profile without a tools list asks for: Pi's default tools, as Pi's own agent definitions do. */
export const PI_DEFAULT_TOOLS = ["read", "bash", "edit", "write"];

/** The tools that change files or run commands: a child with none of them runs its CLI read-only. */
export const WRITING_TOOLS = ["bash", "edit", "write"];

/**
 * Pi's search tools read nothing that `read` cannot: a parent holding `read` holds their authority,
 * though Pi does not activate them by default.
 */
const READ_ALIKE_TOOLS = ["grep", "find", "ls"];

/** A child's tools as decided at launch: what the launch record and `inspect` show. */
export interface ChildTools {
  /** The tools the child runs with. */
  effective: string[];
  /** Tools its profile asks for that the parent session does not hold: the child runs without them. */
  withheld: string[];
  /** Tools the profile's disallowedTools took away. */
  denied: string[];
}

/** Claude Code's own names for Pi's tools (`Read`, `Glob`, …) in a profile mean Pi's tools. */
const PI_NAME_OF: Record<string, string> = Object.fromEntries(Object.entries(CLAUDE_TOOLS).map(([pi, claude]) => [claude, pi]));

// Own keys only: a tool named `constructor` or `toString` is a name, not Object.prototype's method.
const piName = (tool: string): string => (Object.hasOwn(PI_NAME_OF, tool) ? PI_NAME_OF[tool]! : tool);

/** `*` matches any characters, as Pi's own tool allowlists take it; anything else is literal. */
function matcher(pattern: string): (name: string) => boolean {
  if (!pattern.includes("*")) return (name) => name === pattern;
  const source = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  const regex = new RegExp(`^${source}$`);
  return (name) => regex.test(name);
}

/**
 * Whether a tool's name can stand in a child's tool list as itself. Pi reads an entry with `*` as a
 * pattern, and a list holding `+name` or `-name` entries as changes to its default tools (read,
 * bash, edit, write): a parent's tool so named (an extension may register one) would hand the child
 * every tool or Pi's defaults. Such a tool cannot be named to a child, so it is never lent.
 */
const lendable = (tool: string): boolean => !tool.startsWith("+") && !tool.startsWith("-") && !tool.includes("*");

/** The names the parent's authority covers: its active tools, and the read-alike tools when it holds read. */
function authorityOf(parentTools: readonly string[]): string[] {
  const held = parentTools.filter(lendable);
  if (held.includes("read")) for (const tool of READ_ALIKE_TOOLS) if (!held.includes(tool)) held.push(tool);
  return held;
}

/**
 * The child's tools: each tool its profile names (patterns match within the parent's authority)
 * that the parent holds, in the profile's order, without those its disallowedTools names.
 */
export function boundChildTools(profile: Pick<ChildProfile, "tools" | "disallowedTools">, parentTools: readonly string[]): ChildTools {
  const authority = authorityOf(parentTools);
  const wanted: string[] = [];
  const withheld: string[] = [];
  for (const entry of (profile.tools ?? PI_DEFAULT_TOOLS).map(piName)) {
    if (entry.includes("*")) {
      const matches = matcher(entry);
      wanted.push(...authority.filter(matches));
      withheld.push(...parentTools.filter((tool) => !lendable(tool) && matches(tool)));
    } else if (authority.includes(entry)) {
      wanted.push(entry);
    } else {
      withheld.push(entry);
    }
  }
  const deny = deniedPatterns(profile).map(matcher);
  const effective: string[] = [];
  const denied: string[] = [];
  for (const tool of new Set(wanted)) (deny.some((denies) => denies(tool)) ? denied : effective).push(tool);
  return { effective, withheld: [...new Set(withheld)].filter((tool) => !deny.some((denies) => denies(tool))), denied };
}

/**
 * The profile's disallowedTools as Pi's names and patterns. A pi child's session gets them as its
 * excludeTools too: Pi keeps MCP tools (`mcp__…`) a tools list does not name registered for tools
 * that call others (codemode's way), and only a deny list takes them away there.
 */
export function deniedPatterns(profile: Pick<ChildProfile, "disallowedTools">): string[] {
  return (profile.disallowedTools ?? []).map(deniedTool).map(piName);
}

/** Whether a child with these tools changes anything: CLI children without them run read-only. */
export function writes(tools: readonly string[]): boolean {
  return tools.some((tool) => WRITING_TOOLS.includes(piName(tool)) || tool === "NotebookEdit");
}
