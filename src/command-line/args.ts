import { statSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { closestName } from "../../runtime/closest-name.ts";
import { FlowError } from "../contract/errors.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

export interface Parsed {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

/**
 * One subcommand's flags, strictly: an unknown flag, a missing value or a wrong number of
 * positionals is request_invalid (exit 2), with the command's usage line in the message.
 */
/** How many positionals, and what the first missing one is called ("Missing argument: <runId>."). */
type Arity = { min: number; max: number; missing?: string };

/** `positionals` may depend on the flags given (`flow run --resume` takes no workflow). */
export function parseCommand(argv: readonly string[], options: Options, positionals: Arity | ((values: Parsed["values"]) => Arity), usage: string): Parsed {
  let parsed: Parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true }) as Parsed;
  } catch (error) {
    const message = (error as Error).message.replace(/\. To specify a positional.*$/s, "");
    throw new FlowError("request_invalid", `${message}${nearestOption(message, options)}\nUsage: ${usage}`);
  }
  const count = parsed.positionals.length;
  const arity = typeof positionals === "function" ? positionals(parsed.values) : positionals;
  if (count < arity.min || count > arity.max) {
    const what = count < arity.min ? `Missing argument${arity.missing ? `: ${arity.missing}` : ""}` : `Unexpected argument "${parsed.positionals[arity.max]}"`;
    throw new FlowError("request_invalid", `${what}.\nUsage: ${usage}`);
  }
  return parsed;
}

/** `; did you mean --args?` for Node's `Unknown option '--arg'`, when a flag of the command is that near. */
function nearestOption(message: string, options: Options): string {
  const given = /^Unknown option '--([^'=]+)'/.exec(message)?.[1];
  const near = given === undefined ? undefined : closestName(given, Object.keys(options));
  return near === undefined ? "" : `; did you mean --${near}?`;
}

export const stringFlag = (parsed: Parsed, name: string): string | undefined => {
  const value = parsed.values[name];
  return typeof value === "string" ? value : undefined;
};

export const listFlag = (parsed: Parsed, name: string): string[] => {
  const value = parsed.values[name];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
};

export const boolFlag = (parsed: Parsed, name: string): boolean => parsed.values[name] === true;

/** A positive integer flag, or request_invalid. */
export function intFlag(parsed: Parsed, name: string, fallback: number, max: number): number {
  const raw = stringFlag(parsed, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1 || value > max) throw new FlowError("request_invalid", `--${name} must be an integer from 1 to ${max}.`);
  return value;
}

/** Quotes one argument the way a POSIX shell would need it, for the session's record of the command. */
export const shellQuote = (arg: string): string => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`);

/** Pi's own flags for a one-command trust decision (`pi --approve`, `pi --no-approve`). */
export const TRUST_OPTIONS = {
  approve: { type: "boolean", short: "a" },
  "no-approve": { type: "boolean" },
} as const;

/** `--approve` trusts the project for this command, `--no-approve` distrusts it, neither leaves it to the saved decision. */
export function trustOverride(parsed: Parsed): boolean | undefined {
  const approve = boolFlag(parsed, "approve");
  const deny = boolFlag(parsed, "no-approve");
  if (approve && deny) throw new FlowError("request_invalid", "Give --approve or --no-approve, not both.");
  return approve ? true : deny ? false : undefined;
}

/** The project a command works in: `--cwd`, else the shell's directory; one that is not a directory is request_invalid. */
export function projectDir(parsed: Parameters<typeof stringFlag>[0]): string {
  const cwd = resolve(stringFlag(parsed, "cwd") ?? ".");
  if (!statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) throw new FlowError("request_invalid", `--cwd ${cwd} is not a directory.`);
  return cwd;
}
