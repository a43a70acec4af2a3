// parseWorkflow: syntax check, static `apiVersion`/`meta`, and the runnable body. Nothing runs here.
import { parse as acornParse, type ExportDefaultDeclaration, type ExportNamedDeclaration, type Node, type Program } from "acorn";
import { closestName } from "./closest-name.ts";
import { WorkflowScriptError } from "./errors.ts";
import { LimitsError, resolveLimits } from "./limits.ts";
import { NotLiteralError, readLiteral } from "./literal.ts";
import { jsonSchemaProblem } from "./schema-check.ts";
import { capText } from "./text.ts";
import type { JsonValue, ParsedWorkflow, WorkflowMeta, WorkflowOrigin } from "./types.ts";

export const SUPPORTED_API_VERSIONS: readonly number[] = [1];

export interface ParseWorkflowOptions {
  origin: WorkflowOrigin;
  /** Shown in errors and stack traces. */
  path?: string;
  /**
   * false: `meta.args` is checked only for being an object; the caller checks it as a JSON Schema
   * (pi-flow does so in its schema worker, off Pi's thread: the check takes time in proportion to
   * the schema). Default true: jsonSchemaProblem here.
   */
  checkArgsSchema?: boolean;
}

type Fail = (message: string, node?: Node) => never;

/** The most of a key, name or value a refusal quotes: the script may write one a megabyte long. */
const MAX_QUOTE_CHARS = 100;
const quoted = (text: string): string => capText(text, MAX_QUOTE_CHARS);

/** Throws WorkflowScriptError (`code: "script_invalid"`, 1-based `line`/`column`) when the script cannot run. */
export function parseWorkflow(source: string, options: ParseWorkflowOptions): ParsedWorkflow {
  return parseWorkflowTree(source, options);
}

/** parseWorkflow on the tree parseProgram gave for `source`, for a caller that reads the tree too (flow check). */
export function parseWorkflowTree(source: string, options: ParseWorkflowOptions, tree?: Program): ParsedWorkflow {
  const fail: Fail = (message, node) => {
    const at = node?.loc?.start;
    throw new WorkflowScriptError(message, at?.line ?? 1, (at?.column ?? 0) + 1, options.path);
  };
  if (typeof source !== "string") fail("workflow source must be a string");
  if (options.origin !== "saved" && options.origin !== "inline") fail(`unknown origin "${String(options.origin)}"`);

  const program = tree ?? parseProgram(source, options.path);
  const exported = readExports(program, fail);
  rejectDynamicImports(program, fail);

  if (options.origin === "saved" && !exported.apiVersion) fail("a saved workflow must declare `export const apiVersion = 1`");
  if (options.origin === "saved" && !exported.meta) fail("a saved workflow must declare `export const meta = { ... }`");

  const apiVersion = exported.apiVersion ? literalOf(exported.apiVersion, "apiVersion", fail) : 1;
  if (typeof apiVersion !== "number" || !SUPPORTED_API_VERSIONS.includes(apiVersion)) {
    fail(`unsupported apiVersion ${quoted(JSON.stringify(apiVersion))}; supported: ${SUPPORTED_API_VERSIONS.join(", ")}`, exported.apiVersion?.init);
  }
  const meta = exported.meta ? checkMeta(literalOf(exported.meta, "meta", fail), exported.meta.init, fail, savedName(options), options.checkArgsSchema ?? true) : {};

  const body = exported.main ? callMain(source, exported, program, fail) : blankExports(source, exported.ranges);
  const parsed: ParsedWorkflow = { apiVersion: 1, meta, origin: options.origin, source, body };
  if (options.path !== undefined) parsed.path = options.path;
  // The body keeps every position of the source (blanked exports, text added after its end only).
  trees.set(parsed, { body, tree: program });
  return parsed;
}

/** Each parsed workflow's tree, until its first run guards its body (frame-guard.ts). */
const trees = new WeakMap<ParsedWorkflow, { body: string; tree: Program }>();

/** The tree `workflow` was parsed from, once, and only while its body is the one parsed: a run need not parse it again. */
export function takeSyntaxTree(workflow: ParsedWorkflow): Program | undefined {
  const kept = trees.get(workflow);
  trees.delete(workflow);
  return kept !== undefined && kept.body === workflow.body ? kept.tree : undefined;
}

export function parseProgram(source: string, path: string | undefined): Program {
  try {
    return acornParse(source, {
      ecmaVersion: "latest",
      sourceType: "module",
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
      locations: true,
    });
  } catch (error) {
    const { loc, pos } = error as { loc?: { line: number; column: number }; pos?: number };
    let message = error instanceof Error ? error.message.replace(/ \(\d+:\d+\)$/, "") : String(error);
    // At the end of the text, acorn's "Unexpected token" points at an empty last line: say what it means.
    const atEnd = message === "Unexpected token" && pos !== undefined && source.slice(pos).trim() === "";
    if (atEnd) message = "Unexpected end of script: a {, ( or [ opened before it is not closed";
    const line = loc?.line ?? 1;
    // "Unexpected token" alone does not show which: the line's text goes with the error (none past the end).
    const lineText = atEnd ? undefined : source.split(/\r\n?|\n|\u2028|\u2029/)[line - 1];
    throw new WorkflowScriptError(`syntax error: ${message}`, line, (loc?.column ?? 0) + 1, path, lineText);
  }
}

interface ExportedConst {
  init: Node;
  node: ExportNamedDeclaration;
}

interface Exports {
  apiVersion?: ExportedConst;
  meta?: ExportedConst;
  /** `export default <function>`: the function form, run as `main({ args })` after the top level. */
  main?: ExportDefaultDeclaration;
  /** [start, end) of each `export` keyword, blanked in the body. */
  ranges: Array<[number, number]>;
}

const ONLY_EXPORTS = "only `export const apiVersion`, `export const meta` and `export default` (the workflow's function) may be exported";

function readExports(program: Program, fail: Fail): Exports {
  const exports: Exports = { ranges: [] };
  for (const node of program.body) {
    if (node.type === "ImportDeclaration") fail("imports are not allowed in workflow scripts", node);
    if (node.type === "ExportDefaultDeclaration") {
      const kind = node.declaration.type;
      if (kind !== "FunctionDeclaration" && kind !== "FunctionExpression" && kind !== "ArrowFunctionExpression") {
        fail("`export default` must be the workflow's function, e.g. `export default async function ({ args }) { ... }`", node.declaration);
      }
      exports.main = node;
      continue;
    }
    if (node.type === "ExportAllDeclaration") fail(ONLY_EXPORTS, node);
    if (node.type !== "ExportNamedDeclaration") continue;
    const declaration = node.declaration;
    if (!declaration || declaration.type !== "VariableDeclaration" || node.specifiers.length > 0) {
      fail(ONLY_EXPORTS, node);
    }
    if (declaration.kind !== "const" || declaration.declarations.length !== 1) {
      fail("export `apiVersion` and `meta` as single `const` declarations", node);
    }
    const declarator = declaration.declarations[0];
    const name = declarator?.id.type === "Identifier" ? declarator.id.name : undefined;
    if (!declarator || (name !== "apiVersion" && name !== "meta")) {
      fail(ONLY_EXPORTS, node);
    }
    if (!declarator.init) fail(`\`${name}\` needs a value`, node);
    exports[name] = { init: declarator.init, node };
    exports.ranges.push([node.start, declaration.start]);
  }
  return exports;
}

/**
 * Every syntax node below `roots`, depth first, iteratively (a deeply nested script cannot
 * overflow the host's stack). Nodes for which `descend` says false are yielded but not entered.
 */
export function* syntaxNodes(roots: readonly unknown[], descend: (node: Node) => boolean = () => true): Generator<Node> {
  const stack: unknown[] = [...roots];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      // One by one: spreading a literal's array of 100,000 elements into push() overflows the stack.
      for (const item of value as unknown[]) stack.push(item);
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    const node = value as Node;
    yield node;
    if (!descend(node)) continue;
    // Keys, not entries: a pair per key was most of the garbage a large meta.args made.
    for (const key of Object.keys(node)) {
      const child = (node as unknown as Record<string, unknown>)[key];
      if (key !== "loc" && child !== null && typeof child === "object") stack.push(child);
    }
  }
}

/** import() and import.meta can appear anywhere, so walk the whole tree. */
function rejectDynamicImports(program: Program, fail: Fail): void {
  for (const node of syntaxNodes([program])) {
    if (node.type === "ImportExpression") fail("import() is not allowed in workflow scripts", node);
    if (node.type === "MetaProperty" && (node as Node & { meta: { name: string } }).meta.name === "import") {
      fail("import.meta is not allowed in workflow scripts", node);
    }
  }
}

function literalOf(exported: ExportedConst, name: string, fail: Fail): JsonValue {
  try {
    return readLiteral(exported.init as Parameters<typeof readLiteral>[0]);
  } catch (error) {
    if (error instanceof NotLiteralError) fail(`\`${name}\` ${error.message}`, error.node);
    throw error;
  }
}

/** The keys `meta` may have; anything else is a typo or a misunderstanding, and fails the parse. */
export const META_KEYS = ["name", "description", "args", "limits", "tools"] as const;

/** A saved workflow's name is its file's stem: `meta.name`, when given, must say the same. */
function savedName(options: ParseWorkflowOptions): string | undefined {
  if (options.origin !== "saved" || options.path === undefined) return undefined;
  const file = options.path.split(/[\\/]/).pop() ?? "";
  return file.endsWith(".js") ? file.slice(0, -3) : undefined;
}

/** The node of `meta`'s own property `key`, for a position that points at the problem. */
function propertyNode(meta: Node, key: string): Node {
  const properties = (meta as Node & { properties?: Array<Node & { key?: Node & { name?: string; value?: unknown } }> }).properties ?? [];
  const found = properties.find((property) => property.key?.name === key || property.key?.value === key);
  return found ?? meta;
}

function checkMeta(value: JsonValue, node: Node, fail: Fail, fileName: string | undefined, checkArgsSchema: boolean): WorkflowMeta {
  if (value === null || typeof value !== "object" || Array.isArray(value)) fail("`meta` must be an object literal", node);
  const meta = value as Record<string, JsonValue>;
  const at = (key: string) => propertyNode(node, key);
  for (const key of Object.keys(meta)) {
    if ((META_KEYS as readonly string[]).includes(key)) continue;
    const near = closestName(key, META_KEYS);
    fail(`unknown meta key \`${quoted(key)}\`${near ? `; did you mean \`${near}\`?` : ""} (meta takes ${META_KEYS.join(", ")})`, at(key));
  }
  for (const key of ["name", "description"] as const) {
    if (meta[key] !== undefined && typeof meta[key] !== "string") fail(`\`meta.${key}\` must be a string`, at(key));
  }
  if (fileName !== undefined && meta.name !== undefined && meta.name !== fileName) {
    // Say both ways out: a newcomer often copies a workflow to a new file and keeps its name.
    const named = quoted(String(meta.name));
    const rename = /^[\w.-]+$/.test(named) ? `, or rename the file ${named}.js` : "";
    fail(`\`meta.name\` is "${named}" but the file is ${fileName}.js: a saved workflow is called by its file name; write \`name: "${fileName}"\` or leave \`name\` out${rename}`, at("name"));
  }
  if (meta.args !== undefined) {
    if (meta.args === null || typeof meta.args !== "object" || Array.isArray(meta.args)) fail("`meta.args` must be a JSON Schema object", at("args"));
    const problem = checkArgsSchema ? jsonSchemaProblem(meta.args) : undefined;
    if (problem !== undefined) fail(`\`meta.args\` is not a valid JSON Schema: ${problem}`, at("args"));
  }
  if (meta.tools !== undefined && (!Array.isArray(meta.tools) || meta.tools.some((tool) => typeof tool !== "string"))) {
    fail("`meta.tools` must be an array of tool names", at("tools"));
  }
  if (meta.limits !== undefined) {
    if (meta.limits === null || typeof meta.limits !== "object" || Array.isArray(meta.limits)) fail("`meta.limits` must be an object", at("limits"));
    try {
      resolveLimits(meta.limits);
    } catch (error) {
      if (error instanceof LimitsError) fail(`meta: ${error.message}`, at("limits"));
      throw error;
    }
  }
  return meta as WorkflowMeta;
}

/**
 * The function form: the top level runs first (so constants and helpers declared below the function
 * exist), then the default export is called with `{ args }` and its value is the result. `export
 * default` becomes `const __main__=` in the same characters, so lines and columns do not move.
 */
function callMain(source: string, exported: Exports, program: Program, fail: Fail): string {
  const main = exported.main!;
  const topReturn = topLevelReturn(program);
  if (topReturn) fail("a workflow with `export default` returns from its function, not from the top level", topReturn);
  const declared = program.body.some((node) => declaredNames(node).includes(MAIN));
  if (declared) fail(`\`${MAIN}\` is reserved in a workflow with \`export default\``, program);
  const prefix = `const ${MAIN}=`;
  const head = source.slice(main.start, main.declaration.start);
  if (/[\n\r]/.test(head.slice(0, prefix.length)) || head.length < prefix.length) {
    fail("write `export default` and the function's start on one line", main);
  }
  // `export default (async () => ...)`: the parentheses the function is wrapped in stay.
  const kept = keepParentheses(head);
  if (kept.slice(0, prefix.length).includes("(")) fail("write a space between `export default` and its `(`", main);
  const body = blankExports(source, exported.ranges);
  const replaced = body.slice(0, main.start) + prefix + kept.slice(prefix.length) + body.slice(main.declaration.start);
  return `${replaced}\n;return await ${MAIN}(Object.freeze({ args }));`;
}

const MAIN = "__main__";

/** What stands between `export default` and its function: white space, comments and parentheses. */
const HEAD_TOKEN = /\s+|\/\/[^\n\r\u2028\u2029]*|\/\*[\s\S]*?\*\/|export|default|\(/y;

/** `head` blanked as blankExports does, but for its opening parentheses. */
function keepParentheses(head: string): string {
  let kept = "";
  HEAD_TOKEN.lastIndex = 0;
  for (let token = HEAD_TOKEN.exec(head); token; token = HEAD_TOKEN.exec(head)) {
    kept += token[0] === "(" ? "(" : token[0].replace(/[^\n\r]/g, " ");
  }
  return kept + head.slice(kept.length).replace(/[^\n\r]/g, " ");
}

function declaredNames(node: Node): string[] {
  if (node.type === "FunctionDeclaration" || node.type === "ClassDeclaration") {
    const id = (node as Node & { id?: { name?: string } | null }).id;
    return id?.name ? [id.name] : [];
  }
  if (node.type === "VariableDeclaration") {
    return (node as Node & { declarations: Array<{ id: Node & { name?: string } }> }).declarations.flatMap((d) => (d.id.name ? [d.id.name] : []));
  }
  return [];
}

/** A `return` outside every function (acorn allows it for the script form). */
function topLevelReturn(program: Program): Node | undefined {
  for (const node of syntaxNodes(program.body, (node) => !/Function|Class/.test(node.type))) {
    if (node.type === "ReturnStatement") return node;
  }
  return undefined;
}

/** Replaces each `export` keyword with spaces so lines and columns stay where the author wrote them. */
function blankExports(source: string, ranges: Array<[number, number]>): string {
  let body = source;
  for (const [start, end] of ranges) {
    body = body.slice(0, start) + body.slice(start, end).replace(/[^\n\r]/g, " ") + body.slice(end);
  }
  return body;
}
