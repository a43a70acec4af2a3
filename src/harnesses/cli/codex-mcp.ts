import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { stripControls } from "../../runs/index.ts";
import { isRecord } from "./guards.ts";
import { startCliProcess } from "./process.ts";
import { CliLaunchError } from "./types.ts";

/**
 * Turning off every MCP server Codex would start for one run. Codex merges a `-c` override into its
 * config key by key (checked with Codex 0.171: `-c mcp_servers={}` leaves every server on), so the
 * only off switch is each server's own `enabled = false`, by name. The names are Codex's own
 * answer: `codex mcp list --json`, run with the child's config overrides, environment and folder,
 * loads the same layers (the user's config.toml, a trusted project's .codex/config.toml, the
 * system's) as the run will.
 */

/** The list's output is a few lines per server: more than this is not a server list. */
const MAX_LIST_BYTES = 4 * 1024 * 1024;
const LIST_KILL_GRACE_MS = 1000;

/** A TOML basic string: JSON's escapes are TOML's, but TOML also wants DEL escaped. */
export const tomlString = (text: string): string => JSON.stringify(text).replace(/\x7f/g, "\\u007f");

export interface McpListInput {
  binary: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The `-c` overrides the run gets. */
  configArgs: string[];
  /** The run skips the user's config.toml (`--ignore-user-config`, which `mcp list` does not take). */
  ignoreUserConfig: boolean;
  scratchDir: string;
  signal: AbortSignal;
}

/** The names of the MCP servers Codex would start for a run with these overrides; throws CliLaunchError when Codex cannot say. */
export async function codexMcpServerNames(input: McpListInput): Promise<string[]> {
  // An empty CODEX_HOME stands for --ignore-user-config: the list then holds no server the run would not know.
  let env = input.env;
  if (input.ignoreUserConfig) {
    const emptyHome = join(input.scratchDir, "codex-home-without-config");
    mkdirSync(emptyHome, { recursive: true, mode: 0o700 });
    env = { ...env, CODEX_HOME: emptyHome };
  }
  const lines: string[] = [];
  let bytes = 0;
  const child = startCliProcess({
    command: input.binary,
    args: ["mcp", "list", "--json", ...input.configArgs],
    cwd: input.cwd,
    env,
    stdin: "",
    killGraceMs: LIST_KILL_GRACE_MS,
    maxLineBytes: MAX_LIST_BYTES,
    maxStderrBytes: 64 * 1024,
    onLine: (line) => {
      bytes += Buffer.byteLength(line, "utf8") + 1;
      if (bytes > MAX_LIST_BYTES) child.stop("it wrote more than 4 MiB");
      else lines.push(line);
    },
  });
  const stop = () => child.stop("the run was stopped");
  input.signal.addEventListener("abort", stop, { once: true });
  if (input.signal.aborted) stop();
  const exit = await child.exited;
  input.signal.removeEventListener("abort", stop);
  if (exit.unterminated !== undefined) lines.push(exit.unterminated);
  const why = (detail: string) => {
    const stderr = stripControls(exit.stderr.lastLines(400)).trim();
    return new CliLaunchError(
      `codex could not list its MCP servers (\`codex mcp list --json\` ${detail}${stderr ? `: ${stderr}` : ""}), so this child, which may use none, was not started with them running`,
    );
  };
  if (exit.spawnError !== undefined && exit.code === null && exit.signal === null) throw why(`could not be started: ${exit.spawnError}`);
  if (exit.stopped !== undefined) throw why(`was stopped: ${exit.stopped}`);
  if (exit.code !== 0) throw why(exit.code === null ? `was ended by ${exit.signal ?? "a signal"}` : `exited with code ${exit.code}`);
  let listed: unknown;
  try {
    listed = JSON.parse(lines.join("\n"));
  } catch {
    throw why("wrote something that is not JSON");
  }
  if (!Array.isArray(listed)) throw why("wrote JSON that is not a list");
  return listed.map((server) => {
    if (!isRecord(server) || typeof server.name !== "string") throw why("listed a server without a name");
    return server.name;
  });
}

/** The override that turns off each named server: `mcp_servers={"a"={enabled=false},…}` (an inline table also takes a name with a dot in it). */
export const disabledMcpServers = (names: readonly string[]): string =>
  `mcp_servers={${names.map((name) => `${tomlString(name)}={enabled=false}`).join(",")}}`;
