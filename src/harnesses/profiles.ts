import { readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { parseFrontmatter } from "@earendil-works/pi-coding-agent";
import { FlowError } from "../contract/errors.ts";
import { printable, readUserFile } from "../runs/index.ts";
import { checkContextRequest, type ContextRequest } from "../parent-context/modes.ts";

/**
 * A child profile: what a role or a Pi agent definition decides about a child. Both are markdown
 * files with frontmatter (name, description, tools, disallowedTools, model, and for roles context
 * and harness), whose body is the child's system prompt.
 */
export interface ChildProfile {
  name: string;
  description: string;
  systemPrompt: string;
  /** The child's tools; absent means Pi's default tools, as Pi's own agent definitions do. */
  tools?: string[];
  /**
   * Tools the child never gets, whatever `tools` and the parent allow (names or `*` patterns), as
   * Claude Code's and Pi's agent definitions say it. See child-tools.ts for the whole rule.
   */
  disallowedTools?: string[];
  model?: string;
  defaultContext: ContextRequest;
  harness?: string;
  /** `isolated: true` in the frontmatter: the child loads no ambient extension or MCP server. */
  isolated?: boolean;
  /** `isolation: worktree` in the frontmatter: the child works in its own git worktree (src/isolation/). */
  isolation?: "worktree";
  source: "builtin" | "user" | "project";
}

type Frontmatter = {
  name?: unknown;
  description?: unknown;
  tools?: unknown;
  disallowedTools?: unknown;
  model?: unknown;
  context?: unknown;
  harness?: unknown;
  isolated?: unknown;
  isolation?: unknown;
};

function toolList(value: unknown, file: string, field = "tools"): string[] | undefined {
  if (value === undefined) return undefined;
  const raw = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : undefined;
  if (!raw || raw.some((item) => typeof item !== "string")) {
    throw new FlowError("configuration_invalid", `${file}: ${field} must be a list of tool names.`);
  }
  return raw.map((item: string) => item.trim()).filter((item) => item.length > 0);
}

const optionalTools = (tools: string[] | undefined) => (tools === undefined ? {} : { tools });
const optionalDenied = (denied: string[] | undefined) => (denied === undefined || denied.length === 0 ? {} : { disallowedTools: denied });

/** `none`, `full`, `recent` or `recent:N` in a file's frontmatter. */
function contextFrom(value: unknown, file: string): ContextRequest | undefined {
  if (value === undefined) return undefined;
  const match = typeof value === "string" ? /^(none|full|recent)(?::(\d+))?$/.exec(value.trim()) : null;
  if (!match) throw new FlowError("configuration_invalid", `${file}: context must be none, full or recent:N.`);
  try {
    return checkContextRequest(match[1] === "recent" ? { mode: "recent", turns: Number(match[2] ?? 2) } : { mode: match[1] });
  } catch (error) {
    throw new FlowError("configuration_invalid", `${file}: ${(error as Error).message}`);
  }
}

function optionalString(value: unknown, field: string, file: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") {
    throw new FlowError("configuration_invalid", `${file}: ${field} must be a non-empty string.`);
  }
  return value.trim();
}

/** The most a profile file may hold: a system prompt, not a corpus. */
const PROFILE_MAX_BYTES = 1024 * 1024;

/**
 * A profile's text. A project's profiles come from a repository that may not be the user's: a FIFO
 * or device there must not hold the session, nor a huge file fill it (readUserFile).
 */
function readProfile(path: string): string {
  return readUserFile(path, { what: "The profile", maxBytes: PROFILE_MAX_BYTES, code: "configuration_invalid" });
}

/** Where the YAML parser says its error is: lines counted from the frontmatter's first line. */
type YamlPosition = { linePos?: readonly { line: number; col: number }[] };

/** The most of a parser's message a profile's error quotes. */
const PROBLEM_MAX_CHARS = 300;

/**
 * A frontmatter that is not YAML, as configuration_invalid. The parser's message ends with the
 * failing lines and a caret, and a profile may hold a key on the very line that fails (`api_key:
 * "sk-…`): that excerpt is left out, and so is the text some messages quote after a colon; what
 * remains is redacted and made printable (a tag's name may be quoted), because the
 * message reaches the model, run records and the terminal. The parser counts lines from the one
 * after the opening `---`; the message counts them in the file.
 */
function frontmatterProblem(file: string, text: string | undefined, error: unknown): FlowError {
  const message = error instanceof Error ? error.message : String(error);
  // Not the parser's: the file could not be read (readUserFile says why, without its content).
  if (text === undefined) return new FlowError("configuration_invalid", `${file}: ${message}`);
  const position = (error as YamlPosition | null)?.linePos?.[0];
  let said = message.split("\n", 1)[0]!;
  if (position !== undefined) {
    // What follows a colon is the file's own text (`Block scalar header includes extra characters: |x…`).
    said = said.replace(/ at line \d+, column \d+:?$/, "").replace(/: [\s\S]*$/, "");
    const line = position.line + (/^(?:\uFEFF)?---\r?\n/.test(text) ? 1 : 0);
    said = `${said} (line ${line}, column ${position.col})`;
  }
  const shown = printable(said);
  return new FlowError("configuration_invalid", `${file}: the frontmatter is not valid YAML: ${shown.length > PROBLEM_MAX_CHARS ? `${shown.slice(0, PROBLEM_MAX_CHARS)}…` : shown}`);
}

/** Parses one profile file. A malformed file is configuration_invalid, naming the file. */
export function parseProfileFile(path: string, source: "user" | "project", fallback?: ChildProfile): ChildProfile {
  const file = basename(path);
  let parsed: { frontmatter: Frontmatter; body: string };
  let text: string | undefined;
  try {
    text = readProfile(path);
    parsed = parseFrontmatter<Frontmatter>(text);
  } catch (error) {
    throw frontmatterProblem(file, text, error);
  }
  const { frontmatter, body } = parsed;
  const name = optionalString(frontmatter.name, "name", file) ?? file.replace(/\.md$/, "");
  const systemPrompt = body.trim() || fallback?.systemPrompt;
  if (!systemPrompt) throw new FlowError("configuration_invalid", `${file}: the body (the child's system prompt) is empty.`);
  const model = optionalString(frontmatter.model, "model", file) ?? fallback?.model;
  const harness = optionalString(frontmatter.harness, "harness", file) ?? fallback?.harness;
  if (frontmatter.isolated !== undefined && typeof frontmatter.isolated !== "boolean") {
    throw new FlowError("configuration_invalid", `${file}: isolated must be true or false.`);
  }
  const isolated = frontmatter.isolated ?? fallback?.isolated;
  if (frontmatter.isolation !== undefined && frontmatter.isolation !== "worktree") {
    throw new FlowError("configuration_invalid", `${file}: isolation must be worktree.`);
  }
  const isolation = frontmatter.isolation ?? fallback?.isolation;
  return {
    name,
    description: optionalString(frontmatter.description, "description", file) ?? fallback?.description ?? name,
    systemPrompt,
    ...optionalTools(toolList(frontmatter.tools, file) ?? fallback?.tools),
    ...optionalDenied(toolList(frontmatter.disallowedTools, file, "disallowedTools") ?? fallback?.disallowedTools),
    ...(model ? { model } : {}),
    defaultContext: contextFrom(frontmatter.context, file) ?? fallback?.defaultContext ?? { mode: "none" },
    ...(harness ? { harness } : {}),
    ...(isolated ? { isolated } : {}),
    ...(isolation ? { isolation } : {}),
    source,
  };
}

/**
 * The listings read so far, each with its directory's modification time (nanoseconds): every
 * child selects its role here, and a directory that did not change since is not read again. A file
 * added, removed or renamed changes the directory's time, and the next lookup reads it afresh. A
 * file system stamps times in ticks of a few milliseconds, so two changes in one tick share a time:
 * a listing is kept only once its directory's time is a while in the past.
 */
const SETTLED_MS = 2000;
const listings = new Map<string, { mtimeNs: bigint; files: ReadonlyMap<string, string> }>();
const NONE: ReadonlyMap<string, string> = new Map();

/** The `.md` files of a directory, by profile name; a missing directory has none. Do not modify the map. */
export function profileFiles(dir: string | undefined): ReadonlyMap<string, string> {
  if (dir === undefined) return NONE;
  const mtimeNs = statSync(dir, { bigint: true, throwIfNoEntry: false })?.mtimeNs;
  if (mtimeNs === undefined) {
    listings.delete(dir);
    return NONE;
  }
  const known = listings.get(dir);
  if (known?.mtimeNs === mtimeNs) return known.files;
  const files = new Map<string, string>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return files;
  }
  for (const name of names.sort()) if (name.endsWith(".md")) files.set(name.slice(0, -3), join(dir, name));
  if (Date.now() - Number(mtimeNs / 1_000_000n) > SETTLED_MS) listings.set(dir, { mtimeNs, files });
  return files;
}

/** Names in a frontmatter take precedence over file names, so read each file's name lazily. */
export function findProfileFile(dir: string | undefined, wanted: string): string | undefined {
  const files = profileFiles(dir);
  const byFileName = files.get(wanted);
  if (byFileName) return byFileName;
  for (const path of files.values()) {
    try {
      const { frontmatter } = parseFrontmatter<Frontmatter>(readProfile(path));
      if (frontmatter.name === wanted) return path;
    } catch {
      // A malformed file only matters when it is the one selected by its file name.
    }
  }
  return undefined;
}
