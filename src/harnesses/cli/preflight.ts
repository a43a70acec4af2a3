import { statSync } from "node:fs";
import { isAbsolute, resolve, sep } from "node:path";
import which from "which";
import { stripControls } from "../../runs/index.ts";
import { absolutePath, childEnvironment, pathOf } from "./env.ts";
import { redactedStart } from "./guards.ts";
import { startCliProcess } from "./process.ts";
import type { CliSpec } from "./types.ts";

/**
 * Finds a CLI and checks it before anything is launched: the binary from its variable (for example
 * PI_FLOW_CLAUDE_BIN) or from PATH, then `<binary> --version`, which must name the product and a
 * version no older than the one pi-flow relies on. A passed version check is remembered per binary
 * (path, size and modification time) for the life of the process; later checks only stat the file.
 * A failed one is not, so a fixed installation is seen at the next call, except a check that ran
 * out of time: its failure stands for a minute, so a binary that hangs is not asked at every call.
 *
 * The check is asynchronous, for a launch as for help and `/flow doctor`: Pi goes on while
 * `--version` runs, and the call's abort (Ctrl-C) ends it at once.
 */

export type Preflight =
  | { ok: true; binary: string; version: string; source: string }
  | { ok: false; reason: string; fix: string; binary?: string };

const VERSION_TIMEOUT_MS = 10_000;

const passed = new Map<string, string>();

/** How long a check that ran out of time stands before the binary is asked again. */
const TIMED_OUT_REMEMBERED_MS = 60_000;
const timedOut = new Map<string, { reason: string; until: number }>();

/** Below 0 when `version` (x.y.z) is older than `than`, 0 when the same, above 0 when newer. */
export function compareVersions(version: string, than: string): number {
  const a = version.split(".").map(Number);
  const b = than.split(".").map(Number);
  for (let index = 0; index < 3; index++) {
    const diff = (a[index] ?? 0) - (b[index] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** Where the binary is, and how it was found; or why it was not. */
function locate(spec: CliSpec, env: NodeJS.ProcessEnv): { binary: string; source: string } | { missing: string } {
  const configured = env[spec.binVariable]?.trim();
  // Only absolute PATH entries: a relative one (`.`, `node_modules/.bin`) is looked up from the host's
  // working directory, so a project would choose the binary pi-flow runs with the user's login.
  const path = absolutePath(pathOf(env) ?? "");
  if (configured) {
    const isPath = configured.includes(sep) || configured.includes("/") || isAbsolute(configured);
    const binary = which.sync(isPath ? resolve(configured) : configured, { path, nothrow: true });
    return binary
      ? { binary, source: `${spec.binVariable}` }
      : { missing: `${spec.binVariable}=${configured} is not an executable file${isPath ? "" : " on PATH"}` };
  }
  // No PATH left would make the lookup relative to the current directory: that is not "on PATH".
  const binary = path === "" ? null : which.sync(spec.command, { path, nothrow: true });
  return binary ? { binary, source: "PATH" } : { missing: `\`${spec.command}\` was not found on PATH` };
}

/** What `--version` did: its exit, output, or why it gave none. */
interface VersionRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  error?: string;
  timedOut?: true;
}

/** How much of `--version`'s stdout its version is looked for in. */
const VERSION_MATCHED_CHARS = 1024;

/** The most of `--version`'s stdout and stderr read. */
const VERSION_OUTPUT_BYTES = 64 * 1024;
/** Between SIGTERM and SIGKILL for what `--version` left running, and the wait for it to be gone. */
const VERSION_KILL_GRACE_MS = 200;

/**
 * `<binary> --version` without holding the event loop, as a CLI child runs (process.ts: its own
 * group, a tag, the reaper), so whatever it started is ended once it answered. Its time running out
 * or `signal` aborting ends it and all it started at once.
 */
async function runVersion(binary: string, env: NodeJS.ProcessEnv, timeoutMs: number, signal: AbortSignal | undefined): Promise<VersionRun> {
  const stdout: string[] = [];
  let stdoutBytes = 0;
  const child = startCliProcess({
    command: binary,
    args: ["--version"],
    cwd: process.cwd(),
    env,
    stdin: "",
    killGraceMs: VERSION_KILL_GRACE_MS,
    maxLineBytes: VERSION_OUTPUT_BYTES,
    maxStderrBytes: VERSION_OUTPUT_BYTES,
    onLine: (line) => {
      stdoutBytes += Buffer.byteLength(line, "utf8");
      if (stdoutBytes > VERSION_OUTPUT_BYTES) child.stop("it wrote more than 64 KiB");
      else stdout.push(line);
    },
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.stop("its time ran out");
  }, timeoutMs);
  const abort = () => child.stop("the call was aborted");
  signal?.addEventListener("abort", abort, { once: true });
  if (signal?.aborted) abort();
  const exit = await child.exited;
  clearTimeout(timer);
  signal?.removeEventListener("abort", abort);
  if (exit.unterminated !== undefined) stdout.push(exit.unterminated);
  const stopped = exit.stopped === undefined || timedOut ? undefined : exit.stopped;
  const error = exit.spawnError !== undefined && exit.code === null && exit.signal === null ? exit.spawnError : stopped;
  return {
    status: exit.code,
    signal: exit.signal,
    stdout: stdout.join("\n"),
    stderr: exit.stderr.text(),
    ...(error !== undefined ? { error } : {}),
    ...(timedOut ? { timedOut: true as const } : {}),
  };
}

type VersionCheck = { ok: true; version: string } | { ok: false; reason: string; timedOut?: true };

function judgeVersion(spec: CliSpec, binary: string, result: VersionRun, timeoutMs: number): VersionCheck {
  if (result.timedOut) return { ok: false, timedOut: true, reason: `\`${binary} --version\` did not answer within ${timeoutMs} ms` };
  if (result.error !== undefined) return { ok: false, reason: `\`${binary} --version\` failed: ${result.error}` };
  // Quoted in help, `/flow doctor` and errors: a wrapper that prints its environment or a key shows none of it.
  const firstLine = (text: string) => stripControls(redactedStart(text.trim().split("\n")[0] ?? "", 200));
  if (result.status !== 0) {
    return { ok: false, reason: `\`${binary} --version\` exited with ${result.status ?? result.signal}: ${firstLine(result.stderr)}` };
  }
  // The version is on the first line ("2.1.197 (Claude Code)", "codex-cli 0.171.0"): the patterns
  // backtrack over a long line of digits and dots, and 64 KiB of one held Pi for seconds.
  const match = spec.versionPattern.exec(result.stdout.slice(0, VERSION_MATCHED_CHARS));
  if (!match?.[1]) return { ok: false, reason: `\`${binary} --version\` printed "${firstLine(result.stdout)}", which is not ${spec.product}'s` };
  const version = match[1];
  if (compareVersions(version, spec.minVersion) < 0) {
    return { ok: false, reason: `${binary} is ${spec.product} ${version}; pi-flow needs ${spec.minVersion} or later` };
  }
  return { ok: true, version };
}

export interface PreflightOptions {
  /** How long `--version` may take; default 10 s. */
  versionTimeoutMs?: number;
  /** Ends `--version` at once; the check then fails and is not remembered. */
  signal?: AbortSignal;
}

/** Where the binary is and what is remembered of it; or the answer, when nothing is left to run. */
function prepare(spec: CliSpec, env: NodeJS.ProcessEnv): Preflight | { binary: string; source: string; key: string; remembered: VersionCheck | undefined } {
  const found = locate(spec, env);
  if ("missing" in found) {
    return { ok: false, reason: found.missing, fix: `Install ${spec.product} (${spec.install}) or set ${spec.binVariable} to its path.` };
  }
  const stat = statSync(found.binary, { throwIfNoEntry: false });
  const key = `${found.binary}\0${stat?.size}\0${stat?.mtimeMs}`;
  return { ...found, key, remembered: rememberedCheck(key) };
}

function conclude(spec: CliSpec, found: { binary: string; source: string; key: string }, result: VersionCheck): Preflight {
  if (!result.ok) {
    if (result.timedOut) timedOut.set(found.key, { reason: result.reason, until: Date.now() + TIMED_OUT_REMEMBERED_MS });
    return {
      ok: false,
      binary: found.binary,
      reason: result.reason,
      fix: `Install ${spec.product} ${spec.minVersion} or later (${spec.install}) or set ${spec.binVariable} to one.`,
    };
  }
  passed.set(found.key, result.version);
  return { ok: true, binary: found.binary, version: result.version, source: found.source };
}

/** A `--version` under way, shared by every launch that asks about the same binary meanwhile. */
interface SharedRun {
  run: Promise<VersionRun>;
  waiting: number;
  stop: AbortController;
}
const running = new Map<string, SharedRun>();

/**
 * Waits for the binary's `--version`, started by this call or one before it that is still running:
 * a fan-out of fifty claude children starts one process, not fifty. An abort ends this call's
 * wait; the process is ended once no call waits for it any more.
 */
function sharedVersion(key: string, binary: string, env: NodeJS.ProcessEnv, timeoutMs: number, signal: AbortSignal | undefined): Promise<VersionRun | "aborted"> {
  if (signal?.aborted) return Promise.resolve("aborted");
  let shared = running.get(key);
  if (shared === undefined) {
    const stop = new AbortController();
    const started: SharedRun = { run: runVersion(binary, env, timeoutMs, stop.signal), waiting: 0, stop };
    void started.run.finally(() => {
      if (running.get(key) === started) running.delete(key);
    });
    running.set(key, started);
    shared = started;
  }
  const one = shared;
  one.waiting++;
  return new Promise((resolve) => {
    const abort = () => {
      if (--one.waiting > 0) return resolve("aborted");
      // Nobody waits for it: it is ended (the answer comes once nothing of it is left), and a later call starts afresh.
      if (running.get(key) === one) running.delete(key);
      one.stop.abort();
      void one.run.then(() => resolve("aborted"));
    };
    signal?.addEventListener("abort", abort, { once: true });
    void one.run.then((run) => {
      signal?.removeEventListener("abort", abort);
      if (!signal?.aborted) resolve(run);
    });
  });
}

/** The check before a launch and for help and `/flow doctor`: `--version` runs without holding Pi, and `options.signal` ends the wait for it. */
export async function preflightCli(spec: CliSpec, env: NodeJS.ProcessEnv = process.env, options: PreflightOptions = {}): Promise<Preflight> {
  const found = prepare(spec, env);
  if ("ok" in found) return found;
  if (found.remembered) return conclude(spec, found, found.remembered);
  const timeoutMs = options.versionTimeoutMs ?? VERSION_TIMEOUT_MS;
  const childEnv = childEnvironment(spec.name, spec.ownEnv, env);
  const run = await sharedVersion(`${found.key}\0${timeoutMs}\0${JSON.stringify(childEnv)}`, found.binary, childEnv, timeoutMs, options.signal);
  // An aborted check says nothing of the binary: it is neither remembered nor reported as its fault.
  if (run === "aborted") return { ok: false, binary: found.binary, reason: `\`${found.binary} --version\` was cancelled`, fix: "Ask again." };
  return conclude(spec, found, judgeVersion(spec, found.binary, run, timeoutMs));
}

/** What an earlier check of this binary (path, size, modification time) still says, if anything. */
function rememberedCheck(key: string): VersionCheck | undefined {
  const version = passed.get(key);
  if (version !== undefined) return { ok: true, version };
  const hung = timedOut.get(key);
  if (hung === undefined) return undefined;
  if (Date.now() < hung.until) return { ok: false, reason: `${hung.reason} (checked in the last minute; asked again after it)` };
  timedOut.delete(key);
  return undefined;
}

/** One line for help and errors: available with its binary and version, or why not and the fix. */
export function describePreflight(spec: CliSpec, preflight: Preflight): string {
  return preflight.ok
    ? `available: ${spec.product} ${preflight.version} at ${preflight.binary} (found via ${preflight.source})`
    : `not available: ${preflight.reason}. ${preflight.fix}`;
}
