import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { FlowError } from "../../contract/errors.ts";
import { ARGS_MAX_BYTES, formatBytes, quoteGiven, readUserFile, SCRIPT_MAX_BYTES, sourceExcerpt } from "../../runs/index.ts";
import { TRUST_HINT } from "../../trust/project-trust.ts";
import { isWorkflowScriptError, resolveLimits, type JsonValue, type ParsedWorkflow } from "../../../runtime/index.ts";
import { closestName } from "../../../runtime/closest-name.ts";
import { checkInWorker, outputSchemaProblem, stoppedCheck, type SchemaCheck } from "../../harnesses/index.ts";
import type { SchemaViolation } from "../../contract/schema-violation.ts";
import type { ResumeReplay } from "./resume/plan.ts";
import { parseOnTree } from "./syntax-tree.ts";

/** Where a workflow's script came from, as the run view's `task.source` says. */
export type WorkflowSource = "shipped" | "project" | "user" | "inline";

export interface SelectedWorkflow {
  /** The saved workflow's name, or "inline". */
  name: string;
  source: WorkflowSource;
  text: string;
  /** Shown in script errors and stack traces; no private directory leaks through it. */
  label: string;
}

/**
 * The script a launch runs and its inputs, checked: a saved or inline workflow (launch.ts), or the
 * run a resume continues, with its own source and args (resume/source.ts).
 */
export interface ChosenSource {
  selected: SelectedWorkflow;
  workflow: ParsedWorkflow;
  args: Record<string, unknown>;
  toolNames: string[];
  resume?: ResumeReplay;
}

/** The package's own workflows/ folder, found from this module so it works wherever pi-flow is installed. */
export const SHIPPED_WORKFLOWS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../../workflows");

export interface WorkflowDirs {
  /** None while the project is untrusted: its saved workflows are not read (project-trust.ts). */
  project: string | undefined;
  user: string;
  shipped: string;
  /** The project's folder exists but is not read: said when a name is not found. */
  projectWithheld?: boolean;
}

export function workflowDirs(cwd: string, flowHome: string, projectTrusted: boolean): WorkflowDirs {
  const project = join(cwd, ".pi", "flow", "workflows");
  const user = join(flowHome, "workflows");
  if (projectTrusted) return { project, user, shipped: SHIPPED_WORKFLOWS_DIR };
  return { project: undefined, user, shipped: SHIPPED_WORKFLOWS_DIR, ...(existsSync(project) ? { projectWithheld: true } : {}) };
}

// A name is a file stem, never a path: "../x" or "a/b" cannot reach outside the three folders.
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** Most specific first: a project file overrides a user file, which overrides a shipped one. */
const ORDER: readonly ("project" | "user" | "shipped")[] = ["project", "user", "shipped"];

/** A saved workflow's text: a regular file of at most SCRIPT_MAX_BYTES (a FIFO or a huge file is configuration_invalid, never a hang). */
function readIfPresent(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  return readUserFile(path, { what: "The workflow file", maxBytes: SCRIPT_MAX_BYTES, code: "configuration_invalid" });
}

/** Every saved workflow name the three folders hold, for the message of an unknown name. */
export function listSavedWorkflows(dirs: WorkflowDirs): string[] {
  const names = new Set<string>();
  for (const where of ORDER) {
    const dir = dirs[where];
    if (dir === undefined) continue;
    try {
      for (const file of readdirSync(dir)) if (file.endsWith(".js")) names.add(file.slice(0, -3));
    } catch {
      // A missing folder holds no workflows.
    }
  }
  return [...names].sort();
}

/** Exactly one of `workflow` and `script`; a saved name resolves project, then user, then shipped. */
export function selectWorkflow(input: { workflow?: string; script?: string }, dirs: WorkflowDirs): SelectedWorkflow {
  if ((input.workflow === undefined) === (input.script === undefined)) {
    throw new FlowError("request_invalid", "Give exactly one of workflow (a saved workflow's name) and script (inline source).");
  }
  if (input.script !== undefined) return { name: "inline", source: "inline", text: input.script, label: "inline.js" };
  const name = input.workflow!;
  if (!NAME.test(name)) {
    throw new FlowError("request_invalid", `${quoteGiven(name)} is not a workflow name: use letters, digits, ".", "_" and "-", no path.`);
  }
  for (const where of ORDER) {
    const dir = dirs[where];
    const text = dir === undefined ? undefined : readIfPresent(join(dir, `${name}.js`));
    if (text !== undefined) return { name, source: where, text, label: `${name}.js` };
  }
  const known = listSavedWorkflows(dirs);
  const withheld = dirs.projectWithheld ? ` This project is not trusted, so its .pi/flow/workflows are not read; ${TRUST_HINT}.` : "";
  const near = closestName(name, known);
  const guess = near === undefined ? "." : `; did you mean ${near}?`;
  throw new FlowError("selection_invalid", `Unknown workflow ${quoteGiven(name)}${guess} Saved workflows: ${known.length > 0 ? known.join(", ") : "none"}.${withheld}`);
}

/**
 * Parse without running anything. Any parse, meta or apiVersion failure is script_invalid, with its
 * position; a syntax error quotes its line under the message, with a caret under the column.
 * `meta.args` is checked as a JSON Schema later, in the schema worker, by checkArgs (every launch
 * and resume calls it); `checkArgsSchema` checks it here instead, for a caller that never does.
 */
export function parseSelected(selected: SelectedWorkflow, options: { checkArgsSchema?: boolean } = {}): ParsedWorkflow {
  const checkArgsSchema = options.checkArgsSchema ?? false;
  try {
    // On the tree the literal checks read too (launch.ts), inline or saved: one parse for both.
    return parseOnTree(selected.text, { origin: selected.source === "inline" ? "inline" : "saved", path: selected.label, checkArgsSchema });
  } catch (error) {
    if (!isWorkflowScriptError(error)) throw error;
    const excerpt = error.lineText === undefined ? "" : `\n${sourceExcerpt(error.lineText, error.column)}`;
    throw new FlowError("script_invalid", `${error.message} (${selected.label}, line ${error.line}, column ${error.column})${excerpt}`);
  }
}

/**
 * Where the `export const meta` declaration starts, as " (file, line L, column C)", so a meta
 * problem found after parsing points at meta like a parse error does.
 */
export function metaPosition(workflow: ParsedWorkflow, label: string): string {
  const match = /export\s+const\s+meta\b/.exec(workflow.source);
  if (!match) return ` (${label})`;
  const before = workflow.source.slice(0, match.index).split("\n");
  return ` (${label}, line ${before.length}, column ${before[before.length - 1]!.length + 1})`;
}

/**
 * `args` against `meta.args`; the first violation is named. No schema: any object is accepted. A
 * saved workflow's schema may hold a pattern that backtracks for ever, or $refs that branch
 * exponentially: it is checked in the checking worker (src/harnesses/schema-worker.ts), with its
 * time and memory limits, never on the host's main thread. `passing`: how this caller passes args,
 * said when a required one is missing (none for a resume, whose args are the run's own).
 */
export async function checkArgs(
  workflow: ParsedWorkflow,
  args: Record<string, unknown> | undefined,
  label = "inline.js",
  signal?: AbortSignal,
  passing?: ArgsPassing,
): Promise<Record<string, unknown>> {
  const schema = workflow.meta.args;
  if (schema !== undefined) await refuseArgsSchemaProblem(schema, workflow, label, signal);
  const value = args ?? {};
  // The script can send back nothing nested deeper than valueDepth, and the sandbox would overflow
  // its stack reading args a few thousand levels deep: refused here, as the caller's mistake, and
  // before JSON.stringify, which overflows the host's stack at 10,000 levels.
  const { valueDepth } = resolveLimits(workflow.meta.limits);
  if (nestsDeeperThan(value, valueDepth)) {
    throw new FlowError("request_invalid", `args nest deeper than ${valueDepth} levels (the workflow's valueDepth limit); pass flatter args.`);
  }
  // Args are journaled whole in the launch record and handed to the sandbox: bounded before either.
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new FlowError("request_invalid", `args cannot be read as JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > ARGS_MAX_BYTES) {
    throw new FlowError("request_invalid", `args is ${bytes} bytes of JSON, over ${formatBytes(ARGS_MAX_BYTES)} (${ARGS_MAX_BYTES} bytes), the most a workflow's args may hold.`);
  }
  if (schema === undefined) return value;
  const violation = checkedInWorker(await checkInWorker(value, schema as Record<string, unknown>, { signal }), schema, workflow, label);
  if (!violation) return value;
  const hint = unknownFieldHint(schema, violation.pointer, violation.message) + misspeltArgHint(schema, value, violation) + missingArgsHint(schema, value, violation, passing);
  throw new FlowError("request_invalid", `args${violation.pointer}: ${violation.message}${hint}`);
}

/**
 * `meta.args` as a JSON Schema (size, compile, meta-schema, self-reference), checked in the schema
 * worker as an outputSchema is: each step takes time in proportion to the schema, which a model
 * writes (an enum of 70,000 file names held Pi's thread for a third of a second), so Pi's thread
 * only copies it there. A problem is the script's, said at its meta.
 */
async function refuseArgsSchemaProblem(schema: JsonValue, workflow: ParsedWorkflow, label: string, signal: AbortSignal | undefined): Promise<void> {
  const problem = await outputSchemaProblem(schema, signal ? { signal } : {});
  if (signal?.aborted) throw new DOMException("The launch was cancelled while meta.args was checked.", "AbortError");
  if (problem === undefined) return;
  // The worker's refusal names the schema it checked as an outputSchema: this one is meta.args.
  const refusal = problem.startsWith(OUTPUT_SCHEMA) ? `meta.args${problem.slice(OUTPUT_SCHEMA.length)}` : `meta.args: ${problem}`;
  throw new FlowError("script_invalid", `${refusal}${metaPosition(workflow, label)}`);
}

const OUTPUT_SCHEMA = "outputSchema";

/** Whether `value` nests arrays and objects more than `limit` levels deep (`{}` is one); found without recursion. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (next.value === null || typeof next.value !== "object") continue;
    if (next.depth > limit) return true;
    for (const child of Object.values(next.value)) if (child !== null && typeof child === "object") stack.push({ value: child, depth: next.depth + 1 });
  }
  return false;
}

/**
 * How the caller passes args, said when a required one is missing: `example` is a JSON object of
 * the missing ones, with placeholders; `count` how many it holds.
 */
export type ArgsPassing = (example: string, count: number) => string;

/** external_workflow's callers pass them in its `args` parameter. */
export const TOOL_ARGS_PASSING: ArgsPassing = (example, count) => `give ${count === 1 ? "it" : "them"} in args: ${example}`;

/** `; give it in args: {"target": "…"}` for required top-level args left out (all of them, not only the first). */
function missingArgsHint(schema: JsonValue, value: Record<string, unknown>, violation: SchemaViolation, passing: ArgsPassing | undefined): string {
  if (passing === undefined || violation.message !== "missing" || violation.pointer.split("/").length !== 2) return "";
  const root = asObject(schema);
  const required = Array.isArray(root?.required) ? root.required.filter((key): key is string => typeof key === "string") : [];
  const missing = required.filter((key) => !Object.hasOwn(value, key));
  if (missing.length === 0) return "";
  const properties = asObject(root?.properties);
  const placeholder = (key: string) => (asObject(properties?.[key])?.type === "string" ? '"…"' : "…");
  const shown = missing.slice(0, HINT_NAMES).map((key) => `${JSON.stringify(key)}: ${placeholder(key)}`);
  if (missing.length > HINT_NAMES) shown.push(`… and ${missing.length - HINT_NAMES} more`);
  return `; ${passing(`{${shown.join(", ")}}`, missing.length)}`;
}

/** The most names a hint lists: a schema of 5,000 properties named them all in one message. */
const HINT_NAMES = 20;

const asObject = (value: JsonValue | undefined): Record<string, JsonValue> | undefined =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;

/** ` (did you mean lenses?)`, or the fields the schema knows there, for an unknown field of args. */
function unknownFieldHint(schema: JsonValue, pointer: string, message: string): string {
  if (message !== "unknown field") return "";
  const segments = pointer.split("/").slice(1);
  const field = segments.pop() ?? "";
  let node = asObject(schema);
  for (const segment of segments) {
    const property: JsonValue | undefined = asObject(node?.properties)?.[segment];
    node = asObject(property ?? (/^\d+$/.test(segment) ? node?.items : undefined));
  }
  const known = Object.keys(asObject(node?.properties) ?? {});
  const near = closestName(field, known);
  if (near !== undefined) return ` (did you mean ${near}?)`;
  if (known.length === 0) return "";
  const more = known.length > HINT_NAMES ? ` and ${known.length - HINT_NAMES} more` : "";
  return ` (known: ${known.slice(0, HINT_NAMES).join(", ")}${more})`;
}

/**
 * ` (args has "targt": a misspelling of target?)` for a required top-level arg left out while args
 * holds a field the schema does not know that is near its name: the missing field is reported
 * first, and without this the user who typed it is told only that it is missing.
 */
function misspeltArgHint(schema: JsonValue, value: Record<string, unknown>, violation: SchemaViolation): string {
  const segments = violation.pointer.split("/");
  if (violation.message !== "missing" || segments.length !== 2) return "";
  const field = segments[1]!.replace(/~1/g, "/").replace(/~0/g, "~");
  const known = asObject(asObject(schema)?.properties) ?? {};
  const near = closestName(field, Object.keys(value).filter((key) => !Object.hasOwn(known, key)));
  return near === undefined ? "" : ` (args has ${JSON.stringify(near)}: a misspelling of ${field}?)`;
}

/** A check of args in the worker, as checkArgs reports it: a pattern stuck or too large is the script's error, naming it. */
function checkedInWorker(checked: SchemaCheck, schema: unknown, workflow: ParsedWorkflow, label: string): SchemaViolation | undefined {
  if (checked.kind === "checked") return checked.violation;
  if (checked.kind === "cancelled") throw new DOMException("The launch was cancelled while its args were checked.", "AbortError");
  const where = metaPosition(workflow, label);
  if (checked.kind === "error") throw new FlowError("script_invalid", `args could not be checked against meta.args: ${checked.message}${where}`);
  throw new FlowError("script_invalid", `${stoppedCheck("args against meta.args", checked, schema)}${where}`);
}
