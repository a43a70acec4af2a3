import type { Node } from "acorn";
import { compile, type JsonSchema } from "@earendil-works/pi-schema";
import { FLOW_ALWAYS_TOOLS } from "./tools.ts";
import { sourceExcerpt } from "../../runs/index.ts";
import { isWorkflowScriptError, type ParsedWorkflow } from "../../../runtime/index.ts";
import { capText } from "../../../runtime/text.ts";
import { MAX_SCHEMA_PROBLEM_CHARS } from "../../../runtime/schema-check.ts";
import { selfReferenceProblem } from "../../../runtime/schema-cycles.ts";
import { literalCallProblems } from "./literal-calls.ts";
import { literalTargetProblems, type KnownNames } from "./named-targets.ts";
import type { Problem } from "./problem.ts";
import { parseOnTree, syntaxTree } from "./syntax-tree.ts";

export { formatProblem, type Problem } from "./problem.ts";

interface Position {
  line: number;
  column: number;
}

type PropertyNode = Node & { key: Node & { name?: string; value?: unknown }; value: Node };
type LiteralNode = Node & { value?: unknown };

/** Where `meta.<property>` (or one string in its array) is written; the parse already succeeded. */
function metaPosition(source: string, property: string, element?: string): Position | undefined {
  const program = syntaxTree(source);
  for (const node of program.body) {
    if (node.type !== "ExportNamedDeclaration" || node.declaration?.type !== "VariableDeclaration") continue;
    const declarator = node.declaration.declarations[0];
    if (declarator?.id.type !== "Identifier" || declarator.id.name !== "meta" || declarator.init?.type !== "ObjectExpression") continue;
    const where = (target: Node): Position => ({ line: target.loc!.start.line, column: target.loc!.start.column + 1 });
    const properties = declarator.init.properties as unknown as PropertyNode[];
    const found = properties.find((candidate) => (candidate.key?.name ?? candidate.key?.value) === property);
    if (!found) return where(declarator);
    if (element !== undefined && found.value.type === "ArrayExpression") {
      const elements = (found.value as Node & { elements: (LiteralNode | null)[] }).elements;
      const literal = elements.find((item) => item?.value === element);
      if (literal) return where(literal);
    }
    return where(found);
  }
  return undefined;
}

/** The tools a file's `meta.tools` names; none when the file does not even parse. */
export function requestedTools(source: string): readonly string[] {
  try {
    return parseOnTree(source, { origin: "inline" }).meta.tools ?? [];
  } catch {
    return [];
  }
}

/**
 * Checks one workflow file without running it: syntax, `apiVersion` and `meta` (as a saved
 * workflow), `meta.args` as a JSON Schema, and `meta.tools` against the tools a `flow` session
 * can call. The same checks `external_workflow` makes before launch, with positions in the file;
 * and the `tools.*` and `agent()` options it names literally (literal-calls.ts), which would fail mid-run.
 */
export async function checkWorkflowSource(
  source: string,
  file: string,
  callableTools: () => readonly string[],
): Promise<{ workflow?: ParsedWorkflow; problems: Problem[] }> {
  let workflow: ParsedWorkflow;
  try {
    workflow = parseOnTree(source, { origin: "saved", path: file });
  } catch (error) {
    if (!isWorkflowScriptError(error)) throw error;
    const excerpt = error.lineText === undefined ? {} : { excerpt: sourceExcerpt(error.lineText, error.column) };
    return { problems: [{ file, line: error.line, column: error.column, message: error.message, ...excerpt }] };
  }
  const problems: Problem[] = [];
  const at = (property: string, message: string, element?: string) => {
    const position = metaPosition(source, property, element) ?? { line: 1, column: 1 };
    problems.push({ file, ...position, message });
  };
  if (workflow.meta.args !== undefined) {
    try {
      compile(workflow.meta.args as JsonSchema);
    } catch (error) {
      at("args", `meta.args is not a usable JSON Schema: ${capText((error as Error).message, MAX_SCHEMA_PROBLEM_CHARS)}`);
    }
    const loops = selfReferenceProblem(workflow.meta.args);
    if (loops) at("args", `meta.args is not a usable JSON Schema: ${loops}`);
  }
  const requested = workflow.meta.tools ?? [];
  if (requested.length > 0) {
    const callable = new Set([...callableTools(), ...FLOW_ALWAYS_TOOLS]);
    for (const name of requested) {
      if (!callable.has(name)) at("tools", `meta.tools names "${capText(name, MAX_SCHEMA_PROBLEM_CHARS)}", which is not a tool (callable: ${[...callable].sort().join(", ")})`, name);
    }
  }
  problems.push(...(await literalCallProblems(source, file, workflow)));
  return problems.length === 0 ? { workflow, problems } : { problems };
}

/**
 * What a saved workflow writes literally that would fail mid-run, after the children before it had
 * run: a tools.* call it may not make, an agent() option or literal outputSchema agent() refuses,
 * a role, agent definition or workflow this project does not know. `flow check`, `flow run` and
 * external_workflow's launch of a saved workflow refuse the same.
 */
export async function literalProblems(source: string, file: string, workflow: ParsedWorkflow, known: KnownNames): Promise<Problem[]> {
  return [...(await literalCallProblems(source, file, workflow)), ...literalTargetProblems(source, file, known)];
}
