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
import { rolesHere } from "../../contract/child-target.ts";
import { listedNames } from "../../contract/listed-names.ts";
import { capText } from "../../../runtime/text.ts";
import type { Problem } from "./problem.ts";
import { listSavedWorkflows, workflowDirs } from "./sources.ts";
import { syntaxTree } from "./syntax-tree.ts";

/** The most of a name a problem quotes: a script may write one a megabyte long. */
const MAX_QUOTED_CHARS = 100;

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

/**
 * Which option names a call's first argument may carry, by callee: agent(), tools.external_delegate,
 * tools.external_workflow; none where the script binds `agent` or `tools` itself (`bound`).
 */
function targetOptions(callee: AnyNode, bound: ReadonlySet<string>): readonly ("role" | "subagent_type" | "workflow")[] {
  if (callee.type === "Identifier" && callee.name === "agent") return bound.has("agent") ? [] : ["role", "subagent_type"];
  if (callee.type !== "MemberExpression" || callee.computed === true) return [];
  const object = callee.object as AnyNode;
  const property = callee.property as AnyNode;
  if (object.type !== "Identifier" || object.name !== "tools" || bound.has("tools") || property.type !== "Identifier") return [];
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

/**
 * A child's options written whole (no spread, no computed key) that name neither role nor
 * subagent_type: the call would fail at run time with request_invalid, after the children before it.
 */
function missingTarget(options: AnyNode, wanted: readonly string[], known: KnownNames): string | undefined {
  if (!wanted.includes("role")) return undefined;
  const properties = options.properties as AnyNode[];
  if (properties.some((property) => property.type !== "Property" || property.computed === true)) return undefined;
  const names = properties.map((property) => {
    const key = property.key as AnyNode;
    return key.type === "Identifier" ? key.name : key.value;
  });
  if (names.includes("role") || names.includes("subagent_type")) return undefined;
  return `the child names neither role nor subagent_type: give one${rolesHere(known.roles)}`;
}

/** Every name a declaration, parameter or catch clause binds, however deep in its pattern. */
export function boundNames(program: AnyNode): Set<string> {
  const names = new Set<string>();
  const bind = (pattern: unknown): void => {
    const node = pattern as AnyNode | null | undefined;
    if (!node) return;
    if (node.type === "Identifier") names.add(node.name as string);
    else if (node.type === "ObjectPattern") for (const property of node.properties as AnyNode[]) bind(property.type === "RestElement" ? property.argument : property.value);
    else if (node.type === "ArrayPattern") for (const element of node.elements as unknown[]) bind(element);
    else if (node.type === "AssignmentPattern") bind(node.left);
    else if (node.type === "RestElement") bind(node.argument);
  };
  walk(program, (node) => {
    if (node.type === "VariableDeclarator") bind(node.id);
    else if (node.type === "CatchClause") bind(node.param);
    else if (/^(FunctionDeclaration|FunctionExpression|ArrowFunctionExpression|ClassDeclaration)$/.test(node.type)) {
      bind(node.id);
      for (const param of (node.params as unknown[] | undefined) ?? []) bind(param);
    }
  });
  return names;
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
  const bound = boundNames(program);
  walk(program, (node) => {
    if (node.type !== "CallExpression") return;
    const wanted = targetOptions(node.callee as AnyNode, bound);
    const [options] = node.arguments as AnyNode[];
    if (wanted.length === 0 || options?.type !== "ObjectExpression") return;
    const missing = missingTarget(options, wanted, known);
    if (missing) problems.push({ file, line: options.loc!.start.line, column: options.loc!.start.column + 1, message: missing });
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
        message: `${option}: "${capText(value, MAX_QUOTED_CHARS)}" is not a known ${kinds[option]} here (${list.length > 0 ? `known: ${listedNames(list)}` : "none found"})`,
      });
    }
  });
  return problems;
}
