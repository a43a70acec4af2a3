/**
 * `flow check`'s look at the globals a script calls by a plain name: `tools.<name>` for a tool the
 * workflow may not call (it is not in `meta.tools`, nor always there), an `agent({ … })` option
 * written as a plain key that agent() does not take, and a literal outputSchema that is no usable
 * JSON Schema. Each would fail mid-run, after the children before it had run (and cost tokens);
 * here they are problems at their position. A script that binds `tools` or `agent` itself is left
 * alone for that name.
 */
import { closestName } from "../../../runtime/closest-name.ts";
import type { JsonValue, ParsedWorkflow } from "../../../runtime/index.ts";
import { NotLiteralError, readLiteral } from "../../../runtime/literal.ts";
import { TOOL_NAMES } from "../../contract/envelope.ts";
import { agentOptionsSchema } from "../../contract/script-schemas.ts";
import { outputSchemaProblem } from "../../harnesses/index.ts";
import { FLOW_ALWAYS_TOOLS } from "./tools.ts";
import { boundNames, walk, type AnyNode } from "./named-targets.ts";
import type { Problem } from "./problem.ts";
import { syntaxTree } from "./syntax-tree.ts";

const keyName = (key: AnyNode): string | undefined => (key.type === "Identifier" ? (key.name as string) : key.type === "Literal" && typeof key.value === "string" ? key.value : undefined);

/** The problem of an outputSchema written as a literal; one built at run time is checked when the call runs. */
async function literalSchemaProblem(node: AnyNode): Promise<string | undefined> {
  let schema: JsonValue;
  try {
    // As the run will see it: JavaScript keeps the last of a key written twice.
    schema = readLiteral(node as unknown as Parameters<typeof readLiteral>[0], "last");
  } catch (error) {
    if (error instanceof NotLiteralError) return undefined;
    throw error;
  }
  return outputSchemaProblem(schema);
}

export async function literalCallProblems(source: string, file: string, workflow: ParsedWorkflow): Promise<Problem[]> {
  const program = syntaxTree(source) as unknown as AnyNode;
  const bound = boundNames(program);
  const available = [...new Set([...(workflow.meta.tools ?? []), ...FLOW_ALWAYS_TOOLS])].sort();
  const agentOptions = Object.keys(agentOptionsSchema().properties as Record<string, unknown>);
  // A literal outputSchema's problem is found in the schema worker: kept in its place in the order.
  const problems: Array<Problem | Promise<Problem | undefined>> = [];
  const at = (node: AnyNode, message: string): Problem => ({ file, line: node.loc!.start.line, column: node.loc!.start.column + 1, message });
  const report = (node: AnyNode, message: string) => problems.push(at(node, message));
  walk(program, (node) => {
    if (node.type === "MemberExpression" && node.computed !== true && !bound.has("tools")) {
      const object = node.object as AnyNode;
      const property = node.property as AnyNode;
      if (object.type !== "Identifier" || object.name !== "tools" || property.type !== "Identifier") return;
      const name = property.name as string;
      if (available.includes(name)) return;
      // Near pi-flow's own tools too, so a typo of one meta.tools does not name yet is not taken for another.
      const near = closestName(name, [...new Set([...available, ...TOOL_NAMES])]);
      const missing = `tools.${name} is not available to this workflow`;
      report(
        property,
        near === undefined || near === name
          ? `${missing}: name "${name}" in meta.tools (available now: ${available.join(", ")})`
          : available.includes(near)
            ? `${missing}; did you mean tools.${near}?`
            : `${missing}; did you mean tools.${near}? Name "${near}" in meta.tools`,
      );
    }
    if (node.type === "CallExpression" && !bound.has("agent")) {
      const callee = node.callee as AnyNode;
      const [options] = node.arguments as AnyNode[];
      if (callee.type !== "Identifier" || callee.name !== "agent" || options?.type !== "ObjectExpression") return;
      for (const property of options.properties as AnyNode[]) {
        if (property.type !== "Property" || property.computed === true) continue;
        const key = keyName(property.key as AnyNode);
        if (key === "outputSchema") {
          const value = property.value as AnyNode;
          problems.push(literalSchemaProblem(value).then((problem) => (problem === undefined ? undefined : at(value, `agent() ${problem}`))));
        }
        if (key === undefined || agentOptions.includes(key)) continue;
        const near = closestName(key, agentOptions);
        report(property.key as AnyNode, `agent() does not take ${key}${near ? ` (did you mean ${near}?)` : ` (it takes ${agentOptions.join(", ")})`}`);
      }
    }
  });
  return (await Promise.all(problems)).filter((problem) => problem !== undefined);
}
