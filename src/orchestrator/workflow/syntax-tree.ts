/**
 * `flow check` looks at a file's syntax tree several times: for `meta.tools`, for the checks
 * `external_workflow` makes, for where a meta problem is written and for the names it calls
 * literally. The file is parsed once; the tree is held weakly, so a run never keeps it.
 */
import type { Program } from "acorn";
import { parseProgram, parseWorkflowTree, type ParseWorkflowOptions } from "../../../runtime/parse.ts";
import type { ParsedWorkflow } from "../../../runtime/index.ts";

let last: { source: string; tree: WeakRef<Program> } | undefined;

/** `source`'s syntax tree; throws WorkflowScriptError on a syntax error, as parseWorkflow does. */
export function syntaxTree(source: string, path?: string): Program {
  const kept = last?.source === source ? last.tree.deref() : undefined;
  if (kept) return kept;
  const tree = parseProgram(source, path);
  last = { source, tree: new WeakRef(tree) };
  return tree;
}

/** parseWorkflow, on the shared tree. */
export const parseOnTree = (source: string, options: ParseWorkflowOptions): ParsedWorkflow => parseWorkflowTree(source, options, syntaxTree(source, options.path));
