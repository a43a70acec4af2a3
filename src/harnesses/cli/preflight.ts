import { spawnSync, type SpawnSyncOptionsWithStringEncoding } from "node:child_process";
import { statSync } from "node:fs";
import { isAbsolute, resolve, sep } from "node:path";
import which from "which";
import { errorCode } from "../../runs/index.ts";
import { absolutePath, childEnvironment, pathOf } from "./env.ts";
import { newTag, signalTagged, stillRunning, TAG_VARIABLE } from "./process-tag.ts";
import type { CliSpec } from "./types.ts";

/**
 * Finds a CLI and checks it before anything is launched: the binary from its variable (for example
 * PI_FLOW_CLAUDE_BIN) or from PATH, then `<binary> --version`, which must name the product and a
 * version no older than the one pi-flow relies on. A passed version check is remembered per binary
 * (path, size and modification time) for the life of the process; later checks only stat the file.
 * A failed one is not, so a fixed installation is seen at the next call, except a check that ran
 * out of time: the check is synchronous, and a binary that hangs would hold Pi's event loop for the
 * whole timeout at every help call and launch, so its failure stands for a minute. Being
 * synchronous, it cannot be aborted (Ctrl-C waits for it): harness selection (registry.ts), help and
 * `/flow doctor` ask for the answer synchronously.
 */

export type Preflight =
  | { ok: true; binary: string; version: string; source: string }
  | { ok: false; reason: string; fix: string; binary?: string };

const VERSION_TIMEOUT_MS = 10_000;

const passed = new Map<string, string>();

/** How long a check that ran out of time stands before the binary is asked again. */
const TIMED_OUT_REMEMBERED_MS = 60_000;
const timedOut = new Map<string, { reason: string; until: number }>();

function newer(version: string, than: string): number {
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

/**
 * `<binary> --version`, in a process group of its own and with a tag, as a CLI child runs
 * (process.ts): whatever it started (a wrapper script's own child, a daemon) is killed once it
 * answered or its time ran out, not left running.
 */
function runVersion(binary: string, env: NodeJS.ProcessEnv, timeoutMs: number) {
  const tag = newTag();
  // spawnSync honours `detached` as spawn does (Node passes it to libuv for both), though its
  // types leave it out; the preflight tests fail if a grandchild outlives the check.
  const options: SpawnSyncOptionsWithStringEncoding & { detached: boolean } = {
    env: { ...env, [TAG_VARIABLE]: tag },
    encoding: "utf8",
    timeout: timeoutMs,
    killSignal: "SIGKILL",
    maxBuffer: 64 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  };
  const result = spawnSync(binary, ["--version"], options);
  const tagged = signalTagged(tag, "SIGKILL");
  if (result.pid) {
    try {
      process.kill(-result.pid, "SIGKILL");
    } catch {
      // Nothing of its group is left.
    }
  }
  // They die at once, but are only gone once they are zombies: wait for that, briefly, so the
  // check returns with nothing of its own still running.
  const deadline = Date.now() + 1000;
  while (stillRunning(tagged).length > 0 && Date.now() < deadline) Atomics.wait(pause, 0, 0, 5);
  return result;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

type VersionCheck = { ok: true; version: string } | { ok: false; reason: string; timedOut?: true };

function checkVersion(spec: CliSpec, binary: string, env: NodeJS.ProcessEnv, timeoutMs: number): VersionCheck {
  const result = runVersion(binary, childEnvironment(spec.name, spec.ownEnv, env), timeoutMs);
  if (errorCode(result.error) === "ETIMEDOUT") {
    return { ok: false, timedOut: true, reason: `\`${binary} --version\` did not answer within ${timeoutMs} ms` };
  }
  if (result.error) return { ok: false, reason: `\`${binary} --version\` failed: ${result.error.message}` };
  const firstLine = (text: string) => text.trim().split("\n")[0]?.slice(0, 200) ?? "";
  if (result.status !== 0) {
    return { ok: false, reason: `\`${binary} --version\` exited with ${result.status ?? result.signal}: ${firstLine(result.stderr)}` };
  }
  const match = spec.versionPattern.exec(result.stdout);
  if (!match?.[1]) return { ok: false, reason: `\`${binary} --version\` printed "${firstLine(result.stdout)}", which is not ${spec.product}'s` };
  const version = match[1];
  if (newer(version, spec.minVersion) < 0) {
    return { ok: false, reason: `${binary} is ${spec.product} ${version}; pi-flow needs ${spec.minVersion} or later` };
  }
  return { ok: true, version };
}

export interface PreflightOptions {
  /** How long `--version` may take; default 10 s. */
  versionTimeoutMs?: number;
}

export function preflightCli(spec: CliSpec, env: NodeJS.ProcessEnv = process.env, options: PreflightOptions = {}): Preflight {
  const found = locate(spec, env);
  if ("missing" in found) {
    return { ok: false, reason: found.missing, fix: `Install ${spec.product} (${spec.install}) or set ${spec.binVariable} to its path.` };
  }
  const stat = statSync(found.binary, { throwIfNoEntry: false });
  const key = `${found.binary}\0${stat?.size}\0${stat?.mtimeMs}`;
  const result = rememberedCheck(key) ?? checkVersion(spec, found.binary, env, options.versionTimeoutMs ?? VERSION_TIMEOUT_MS);
  if (!result.ok) {
    if (result.timedOut) timedOut.set(key, { reason: result.reason, until: Date.now() + TIMED_OUT_REMEMBERED_MS });
    return {
      ok: false,
      binary: found.binary,
      reason: result.reason,
      fix: `Install ${spec.product} ${spec.minVersion} or later (${spec.install}) or set ${spec.binVariable} to one.`,
    };
  }
  passed.set(key, result.version);
  return { ok: true, binary: found.binary, version: result.version, source: found.source };
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
