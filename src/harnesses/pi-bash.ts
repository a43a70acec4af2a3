import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname } from "node:path";
import { createBashToolDefinition, defineTool, type BashSpawnContext, type BashToolDetails, type SettingsManager, type ToolDefinition } from "@earendil-works/pi-coding-agent";
import { processGlobal } from "../../runtime/process-global.ts";
import { redactText } from "../runs/index.ts";
import { childEnvironment, harnessEnvVariable } from "./cli/env.ts";
import { ownedProcesses, PI_TAG_VARIABLE, startOf } from "./cli/process-scan.mjs";
import { newTag, stillRunning, type TaggedProcess } from "./cli/process-tag.ts";
import { reaperForgetPi, reaperWatchPi } from "./cli/reaper.ts";
import { forgetSessions, sessionsOf, watchSessions } from "./pi-bash-sessions.ts";

/**
 * A pi child's bash: Pi's own bash tool, with two differences from the user's.
 *
 * Its environment holds no secret. The child's model calls run in this process, so its shell
 * needs no provider key; a variable is withheld when pi-flow's redaction would hide its value in
 * a run's evidence (ANTHROPIC_API_KEY, GH_TOKEN, a URL with a password) or it holds an OTLP
 * exporter's headers (a collector's key), and pi-flow's own
 * credentials always are. PI_FLOW_PI_ENV names variables to pass anyway, as PI_FLOW_CLAUDE_ENV does
 * for claude.
 *
 * What it starts ends with the child: every command carries the child's tag (PI_FLOW_PI_TAG, as a
 * CLI child's carry PI_FLOW_CLI_TAG, process-tag.ts), and runs in a session of its own that this
 * process records (pi-bash-sessions.ts), so a background job, one that left the shell's process
 * group or session (setsid), or one that dropped the tag from its environment (env -u, env -i), is
 * found and killed when the child settles or this process exits. Only one that does both, once its
 * parent has exited, escapes: it is not a sandbox.
 * A variable of its own: a pi-flow running inside a CLI child passes that child's tag on untouched,
 * so the outer pi-flow still finds these commands too. A host killed with SIGKILL runs no exit hook:
 * the CLI children's reaper (cli/reaper.ts), started with the first command, ends them then. Linux only (the tag is found in /proc). The files Pi
 * keeps a long command's whole output in (`pi-bash-<hex>.log` in the temp folder, unredacted)
 * are removed then too: the run's evidence holds what the child saw, and nothing reads them later.
 */

/** The variable that names what a pi child's bash gets though pi-flow would withhold it. */
export const PI_ENV_VARIABLE = harnessEnvVariable("pi");

/** pi-flow's own credentials: the fleet's database and the collector's headers, never a child's. */
const FLOW_SECRETS = new Set(["PI_FLOW_DATABASE_URL", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"]);

/**
 * An OTLP exporter's headers, for any signal (OTEL_EXPORTER_OTLP_METRICS_HEADERS, _LOGS_HEADERS):
 * a collector's key, which redaction cannot tell from its value (x-honeycomb-team=…).
 */
const COLLECTOR_HEADERS = /^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?HEADERS$/;

/** Judgements already made: an environment changes rarely, and a command runs often. */
const judged = new Map<string, boolean>();
const JUDGED_MAX = 4096;

/** Whether redaction would hide this assignment's value: a secret's name, or a value shaped like one. */
function looksSecret(name: string, value: string): boolean {
  if (COLLECTOR_HEADERS.test(name)) return true;
  const line = `${name}=${value}`;
  let secret = judged.get(line);
  if (secret === undefined) {
    secret = redactText(line).changed;
    if (judged.size >= JUDGED_MAX) judged.clear();
    judged.set(line, secret);
  }
  return secret;
}

/**
 * git's pointers at a repository, set for hooks (`flow run` started from one): a worktree child's
 * git would act on the user's repository and index instead of finding its own from its folder.
 */
const GIT_LOCATION = new Set(["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"]);

/**
 * The environment a pi child's shell gets: `env` (what Pi would give it) without pi-flow's own
 * credentials, without git's pointers at a repository, and without the variables that look secret,
 * unless `PI_ENV_VARIABLE` (read from `source`) names them.
 */
export function childShellEnvironment(env: NodeJS.ProcessEnv, source: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  const secret: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || FLOW_SECRETS.has(name) || GIT_LOCATION.has(name)) continue;
    (looksSecret(name, value) ? secret : kept)[name] = value;
  }
  // The CLI harnesses' allowlist reads the names, `NAME_*` prefixes included, as it does for PI_FLOW_CLAUDE_ENV.
  const listed = childEnvironment("pi", [], { ...secret, [PI_ENV_VARIABLE]: source[PI_ENV_VARIABLE] });
  for (const name of Object.keys(secret)) if (listed[name] !== undefined) kept[name] = secret[name];
  return kept;
}

/** Tags of pi children whose commands may still run, in every copy of pi-flow this process loaded. */
const liveTags = processGlobal("pi-flow.pi-child-tags", () => new Set<string>());

/**
 * SIGKILL to every process of the pi children of `tags`: carrying one of them, in a session their
 * commands started, or descending from such a process (one scan of /proc however many children are
 * live: a scan per tag would hold a worker of hundreds of children at its exit). Returns them, told
 * from a later process with the same pid by their start.
 */
function killTagged(tags: ReadonlySet<string>): TaggedProcess[] {
  const killed: TaggedProcess[] = [];
  for (const pid of ownedProcesses(tags, PI_TAG_VARIABLE, sessionsOf(tags))) {
    const start = startOf(pid);
    if (start === undefined) continue;
    try {
      process.kill(pid, "SIGKILL");
      killed.push({ pid, start });
    } catch {
      // It ended in between.
    }
  }
  return killed;
}

/** A process that exits (a `flow worker` handing its children back) leaves none of their commands running. */
function installExitHook(): void {
  processGlobal("pi-flow.pi-child-exit-hook", () =>
    process.on("exit", () => {
      if (liveTags.size > 0) killTagged(liveTags);
    }),
  );
}

/** How long `end` waits for killed processes to be gone; SIGKILL takes effect at once unless the kernel holds one. */
const END_WAIT_MS = 2000;
/** A process may fork between a scan and its kill: a few scans catch its children too. */
const END_SCANS = 3;

/** Pi's name for a file holding a bash command's whole output (utils/output-files.js): only such files are removed. */
const OUTPUT_FILE = /^pi-bash-[0-9a-f]{16}\.log$/;
const isOutputFile = (path: string): boolean => dirname(path) === tmpdir() && OUTPUT_FILE.test(basename(path));
/** Where an aborted or timed-out command's message names its output file. */
const OUTPUT_FILE_NOTE = /Full output: (\S+)\]/g;

/** One pi child's bash tool and what its commands started. */
export interface ChildShell {
  /** Pi's bash tool for the child, in place of the built-in one. */
  tool: ToolDefinition;
  /** Kills every process the child's commands started that still runs, removes their output files; resolves once they are gone. */
  end(): Promise<void>;
}

export function childShell(cwd: string, settings: SettingsManager): ChildShell {
  installExitHook();
  const tag = newTag();
  const shellPath = settings.getShellPath();
  const commandPrefix = settings.getShellCommandPrefix();
  const definition = createBashToolDefinition(cwd, {
    ...(shellPath !== undefined ? { shellPath } : {}),
    ...(commandPrefix !== undefined ? { commandPrefix } : {}),
    spawnHook: (context: BashSpawnContext) => {
      // From the first command on: a child that runs none costs no scan of /proc, and starts no reaper.
      if (!liveTags.has(tag)) {
        liveTags.add(tag);
        watchSessions(tag);
        reaperWatchPi(tag);
      }
      return { ...context, env: { ...childShellEnvironment(context.env), [PI_TAG_VARIABLE]: tag } };
    },
  });
  const outputFiles = new Set<string>();
  const note = (details: BashToolDetails | undefined) => {
    if (details?.fullOutputPath !== undefined) outputFiles.add(details.fullOutputPath);
  };
  const tool = defineTool({
    ...definition,
    // Active only where the built-in bash would be: the child's tools list (or Pi's defaults) decides.
    defaultActive: false,
    // Every output file the command's updates, result or failure names, to be removed with the child.
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      try {
        const result = await definition.execute(
          toolCallId,
          params,
          signal,
          (update) => {
            note(update.details);
            onUpdate?.(update);
          },
          ctx,
        );
        note(result.details);
        return result;
      } catch (error) {
        for (const [, path] of (error instanceof Error ? error.message : "").matchAll(OUTPUT_FILE_NOTE)) outputFiles.add(path!);
        throw error;
      }
    },
  });
  return {
    tool,
    async end() {
      const killed: TaggedProcess[] = [];
      for (let scan = 0; scan < END_SCANS && liveTags.has(tag); scan++) {
        const found = killTagged(new Set([tag]));
        if (found.length === 0) break;
        killed.push(...found);
      }
      const deadline = Date.now() + END_WAIT_MS;
      while (stillRunning(killed).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      forgetSessions(tag);
      if (liveTags.delete(tag)) reaperForgetPi(tag);
      for (const path of outputFiles) {
        try {
          if (isOutputFile(path)) rmSync(path, { force: true });
        } catch {
          // Left in the temp folder, readable by this user only (Pi creates it 0600).
        }
      }
    },
  };
}
