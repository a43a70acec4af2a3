/**
 * `flow check`'s (and a saved workflow's launch's) look at what a script names literally: `agent({ role: "…" })`,
 * `agent({ subagent_type: "…" })`, the same in `tools.external_delegate(…)`, and
 * `tools.external_workflow({ workflow: "…" })`. A name written as a plain string that this project
 * does not know would fail at run time with selection_invalid; here it is caught before anything
 * runs, at its line and column. Names computed at run time are left to the run.
 */
import type { Node } from "acorn";
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { agentDefinitionDirs, listRoles, profileFiles, roleDirs } from "../../harnesses/index.ts";
import type { Problem } from "./problem.ts";
import { listSavedWorkflows, workflowDirs } from "./sources.ts";
import { syntaxTree } from "./syntax-tree.ts";

export interface KnownNames {
  roles: readonly string[];
  agents: readonly string[];
  workflows: readonly string[];
}

/** The roles, agent definitions and saved workflows a run in `cwd` can name. */
export function knownNames(cwd: string, flowHome: string, projectTrusted: boolean): KnownNames {
  const agents = agentDefinitionDirs(cwd, getAgentDir(), projectTrusted);
  return {
    roles: listRoles(roleDirs(cwd, flowHome, projectTrusted)),
    agents: [...new Set([...profileFiles(agents.user).keys(), ...profileFiles(agents.project).keys()])],
    workflows: listSavedWorkflows(workflowDirs(cwd, flowHome, projectTrusted)),
  };
}

export type AnyNode = Node & Record<string, unknown>;

const isNode = (value: unknown): value is AnyNode => typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";

/** The string a literal or a template without substitutions spells; undefined otherwise. */
function literalString(node: AnyNode): string | undefined {
  if (node.type === "Literal" && typeof node.value === "string") return node.value;
  if (node.type === "TemplateLiteral" && Array.isArray(node.expressions) && node.expressions.length === 0) {
    const quasis = node.quasis as { value: { cooked?: string | null } }[];
    return quasis[0]?.value.cooked ?? undefined;
  }
  return undefined;
}

/** Which option names a call's first argument may carry, by callee: agent(), tools.external_delegate, tools.external_workflow. */
function targetOptions(callee: AnyNode): readonly ("role" | "subagent_type" | "workflow")[] {
  if (callee.type === "Identifier" && callee.name === "agent") return ["role", "subagent_type"];
  if (callee.type !== "MemberExpression" || callee.computed === true) return [];
  const object = callee.object as AnyNode;
  const property = callee.property as AnyNode;
  if (object.type !== "Identifier" || object.name !== "tools" || property.type !== "Identifier") return [];
  if (property.name === "external_delegate") return ["role", "subagent_type"];
  if (property.name === "external_workflow") return ["workflow"];
  return [];
}

export function walk(node: AnyNode, visit: (node: AnyNode) => void): void {
  visit(node);
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) for (const item of value) if (isNode(item)) walk(item, visit);
    if (isNode(value)) walk(value, visit);
  }
}

export function literalTargetProblems(source: string, file: string, known: KnownNames): Problem[] {
  let program: AnyNode;
  try {
    program = syntaxTree(source) as unknown as AnyNode;
  } catch {
    return []; // the syntax check reports it
  }
  const lists = { role: known.roles, subagent_type: known.agents, workflow: known.workflows } as const;
  const kinds = { role: "role", subagent_type: "agent definition (subagent_type)", workflow: "saved workflow" } as const;
  const problems: Problem[] = [];
  walk(program, (node) => {
    if (node.type !== "CallExpression") return;
    const wanted = targetOptions(node.callee as AnyNode);
    const [options] = node.arguments as AnyNode[];
    if (wanted.length === 0 || options?.type !== "ObjectExpression") return;
    for (const property of options.properties as AnyNode[]) {
      if (property.type !== "Property" || property.computed === true) continue;
      const key = property.key as AnyNode;
      const name = key.type === "Identifier" ? key.name : key.type === "Literal" ? key.value : undefined;
      const option = wanted.find((candidate) => candidate === name);
      const value = option ? literalString(property.value as AnyNode) : undefined;
      if (!option || value === undefined || lists[option].includes(value)) continue;
      const list = lists[option];
      const start = (property.value as AnyNode).loc!.start;
      problems.push({
        file,
        line: start.line,
        column: start.column + 1,
        message: `${option}: "${value}" is not a known ${kinds[option]} here (${list.length > 0 ? `known: ${[...list].sort().join(", ")}` : "none found"})`,
      });
    }
  });
  return problems;
}
