import { existsSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { FlowError } from "../contract/errors.ts";
import { REPLAY_MODES, type ReplayMode } from "../harnesses/index.ts";
import { ARGS_MAX_BYTES, assertReplaceableTarget, formatBytes, readUserFile, SCRIPT_MAX_BYTES } from "../runs/index.ts";
import { RUN_USAGE } from "./usage.ts";
import { boolFlag, listFlag, parseCommand, projectDir, shellQuote, stringFlag, TRUST_OPTIONS, trustOverride, type Parsed } from "./args.ts";

/** What one `flow run` was asked to do, checked as far as it can be without a Pi session. */
export interface RunPlan {
  /** The project directory: where saved workflows, roles and the run store's project are looked up. */
  cwd: string;
  /** A saved workflow's name, a script file (run as that file's source), or a run to resume. */
  target: { workflow: string } | { file: string; label: string; source: string } | { resume: string };
  args?: Record<string, unknown>;
  model?: string;
  replay?: { cassette: string; mode: ReplayMode };
  record?: string;
  /** Every child answered by the stub harness, with this seed. */
  stub?: { seed: number };
  json: boolean;
  extensions: string[];
  /** `--approve` (true) or `--no-approve` (false): this command's trust decision for the project. */
  trust?: boolean;
}

const OPTIONS = {
  args: { type: "string" },
  model: { type: "string" },
  replay: { type: "string" },
  "replay-mode": { type: "string" },
  record: { type: "string" },
  stub: { type: "boolean" },
  seed: { type: "string" },
  json: { type: "boolean" },
  cwd: { type: "string" },
  extension: { type: "string", multiple: true },
  resume: { type: "string" },
  ...TRUST_OPTIONS,
} as const;

/** Inline `--args` text, bounded before Pi starts (a file is bounded as it is read). */
function inlineArgs(text: string): string {
  if (Buffer.byteLength(text, "utf8") <= ARGS_MAX_BYTES) return text;
  throw new FlowError("request_invalid", `--args is over ${formatBytes(ARGS_MAX_BYTES)} (${ARGS_MAX_BYTES} bytes), the most a workflow's args may hold.`);
}

/**
 * For `{target: "x"}`, or `{"target":"x"}` typed without single quotes (the shell then removes the
 * double quotes): JSON's names need them, and the shell keeps them only inside single quotes.
 */
function unquotedNamesHint(text: string, fromFile: boolean): string {
  if (!/^\s*\{\s*[\p{L}_$]/u.test(text)) return "";
  return fromFile ? " A property name needs double quotes." : ` A property name needs double quotes, and the shell removes them unless the JSON is in single quotes: --args '{"name": "value"}'.`;
}

/** `--args '{"a":1}'` or `--args @file.json`: a JSON object of at most ARGS_MAX_BYTES, checked once. */
function parseArgsFlag(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  const text = raw.startsWith("@") ? readUserFile(resolve(raw.slice(1)), { what: "The --args file", maxBytes: ARGS_MAX_BYTES, code: "request_invalid" }) : inlineArgs(raw);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // Without the text JSON.parse quotes around the fault (`Unexpected token 'x', "…" is not valid
    // JSON`): a piece of a secret cut out of --args is one no redaction rule would find.
    const message = (error as Error).message;
    const quote = message.indexOf('"');
    const reason = quote === -1 ? message : message.slice(0, quote).replace(/[\s,.]+$/, "");
    throw new FlowError("request_invalid", `--args is not JSON: ${reason}.${unquotedNamesHint(text, raw.startsWith("@"))}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new FlowError("request_invalid", "--args must be a JSON object.");
  return value as Record<string, unknown>;
}

/** The shipped workflows' folder, found without loading the orchestrator: a refusal here costs no start-up. */
const SHIPPED_WORKFLOWS = fileURLToPath(new URL("../../workflows/", import.meta.url));

/**
 * A script file's source. `flow run review.js` where no such file is but a saved workflow `review`
 * is (shipped, or in the project's .pi/flow/workflows/) says to run it by name.
 */
function readScript(name: string, cwd: string): string {
  try {
    return readUserFile(resolve(name), { what: "The script", maxBytes: SCRIPT_MAX_BYTES, code: "request_invalid" });
  } catch (error) {
    const stem = /^([\w.-]+)\.m?js$/.exec(name)?.[1]; // a bare file name: one with a folder was meant as a path
    if (!(error instanceof FlowError) || stem === undefined || existsSync(resolve(name))) throw error;
    const saved = [join(cwd, ".pi", "flow", "workflows"), SHIPPED_WORKFLOWS].some((dir) => statSync(join(dir, `${stem}.js`), { throwIfNoEntry: false })?.isFile());
    throw saved ? new FlowError(error.code, `${error.message} ${stem} is a saved workflow: run it by name (flow run ${stem}).`) : error;
  }
}

/** A path-like target (a slash, or a .js/.mjs name) is a script file; anything else a saved name. */
const isFileTarget = (target: string): boolean => target.includes("/") || target.includes("\\") || /\.m?js$/.test(target);

/** `--stub [--seed N]`: no model at all, so neither --replay nor --model goes with it. */
function stubFlags(parsed: Parsed, replaying: boolean): { seed: number } | undefined {
  const seed = stringFlag(parsed, "seed");
  if (!boolFlag(parsed, "stub")) {
    if (seed !== undefined) throw new FlowError("request_invalid", "--seed goes with --stub.");
    return undefined;
  }
  if (replaying) throw new FlowError("request_invalid", "Give --stub or --replay, not both.");
  if (stringFlag(parsed, "model") !== undefined) throw new FlowError("request_invalid", "--stub calls no model: give no --model with it.");
  const value = Number(seed ?? "0");
  if (!Number.isSafeInteger(value) || value < 0 || !/^\d+$/.test(seed ?? "0")) throw new FlowError("request_invalid", "--seed must be a non-negative integer.");
  return { seed: value };
}

/**
 * Checks `flow run`'s flags. Paths given on the command line are relative to the shell's
 * directory; `--cwd` only chooses the project. Every problem is request_invalid (exit 2).
 */
export function planRun(argv: readonly string[]): RunPlan {
  // `--args @ args.json`: said before the file is taken for a second workflow, and "@" alone is never read as the shell's folder.
  if (argv.some((arg, index) => arg === "--args=@" || (arg === "@" && argv[index - 1] === "--args"))) {
    throw new FlowError("request_invalid", "--args @ names no file: write the file's path right after the @, as --args @args.json.");
  }
  // --resume names the run instead of a workflow: then no positional is taken.
  const parsed = parseCommand(argv, OPTIONS, (values) => (values.resume !== undefined ? { min: 0, max: 1 } : { min: 1, max: 1, missing: "the workflow to run (a saved workflow's <name> or a <path.js>), or --resume <runId>" }), RUN_USAGE);
  const cwd = projectDir(parsed);
  const replay = stringFlag(parsed, "replay");
  const record = stringFlag(parsed, "record");
  const mode = stringFlag(parsed, "replay-mode");
  if (replay !== undefined && record !== undefined) throw new FlowError("request_invalid", "Give --replay or --record, not both.");
  const stub = stubFlags(parsed, replay !== undefined);
  if (mode !== undefined && replay === undefined) throw new FlowError("request_invalid", "--replay-mode goes with --replay.");
  if (mode !== undefined && !(REPLAY_MODES as readonly string[]).includes(mode)) {
    throw new FlowError("request_invalid", `--replay-mode must be ${REPLAY_MODES.join(" or ")}.`);
  }
  // A directory or special file is refused now, before Pi starts and before anything runs.
  if (record !== undefined) assertReplaceableTarget(resolve(record), "The --record target", "request_invalid");
  const model = stringFlag(parsed, "model");
  const args = parseArgsFlag(stringFlag(parsed, "args"));
  const resumed = stringFlag(parsed, "resume");
  if (resumed !== undefined && args !== undefined) throw new FlowError("request_invalid", "--resume runs the run's own args: give no --args with it.");
  if (resumed !== undefined && parsed.positionals.length > 0) {
    throw new FlowError("request_invalid", `--resume runs the run's own workflow: give no workflow with it (flow run --resume ${shellQuote(resumed)}).`);
  }
  const trust = trustOverride(parsed);
  const name = parsed.positionals[0] ?? "";
  const target: RunPlan["target"] =
    resumed !== undefined
      ? { resume: resumed }
      : isFileTarget(name)
        ? { file: resolve(name), label: name, source: readScript(name, cwd) }
        : { workflow: name };
  return {
    cwd,
    target,
    ...(args ? { args } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(replay !== undefined ? { replay: { cassette: resolve(replay), mode: (mode ?? "strict") as ReplayMode } } : {}),
    ...(record !== undefined ? { record: resolve(record) } : {}),
    ...(stub ? { stub } : {}),
    json: boolFlag(parsed, "json"),
    extensions: listFlag(parsed, "extension").map((path) => resolve(path)),
    ...(trust !== undefined ? { trust } : {}),
  };
}

/** A short title for progress: `review (shipped)` is the tool's to say; a file is its name. */
export const targetTitle = (plan: RunPlan): string =>
  "workflow" in plan.target ? plan.target.workflow : "resume" in plan.target ? `resume of ${plan.target.resume}` : basename(plan.target.label);

/**
 * The run as the flow session's first message states it: the workflow (a script by its file name),
 * and `--args <args>` when args were given (their JSON is in the tool call). Children with `recent`
 * or `full` context see this message in their prompt, so it leaves out how they are answered
 * (--model, --extension, --stub, --replay, --record…), where the shell stood (--cwd, a relative
 * path) and how the result prints: with those in it, what --record wrote would not match a strict
 * --replay.
 */
export function runAsChildrenSeeIt(plan: RunPlan): string {
  if ("resume" in plan.target) return `flow run --resume ${shellQuote(plan.target.resume)}`;
  const target = "workflow" in plan.target ? plan.target.workflow : basename(plan.target.label);
  return `flow run ${shellQuote(target)}${plan.args ? " --args <args>" : ""}`;
}
