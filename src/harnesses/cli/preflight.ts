import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { isAbsolute, resolve, sep } from "node:path";
import which from "which";
import { childEnvironment } from "./env.ts";
import type { CliSpec } from "./types.ts";

/**
 * Finds a CLI and checks it before anything is launched: the binary from its variable (for example
 * PI_FLOW_CLAUDE_BIN) or from PATH, then `<binary> --version`, which must name the product and a
 * version no older than the one pi-flow relies on. A passed version check is remembered per binary
 * (path, size and modification time) for the life of the process; later checks only stat the file.
 * A failed one is not, so a fixed installation is seen at the next call.
 */

export type Preflight =
  | { ok: true; binary: string; version: string; source: string }
  | { ok: false; reason: string; fix: string; binary?: string };

const VERSION_TIMEOUT_MS = 10_000;

const passed = new Map<string, string>();

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
  const path = env.PATH ?? "";
  if (configured) {
    const isPath = configured.includes(sep) || configured.includes("/") || isAbsolute(configured);
    const binary = which.sync(isPath ? resolve(configured) : configured, { path, nothrow: true });
    return binary
      ? { binary, source: `${spec.binVariable}` }
      : { missing: `${spec.binVariable}=${configured} is not an executable file${isPath ? "" : " on PATH"}` };
  }
  // No PATH at all would make the lookup relative to the current directory: that is not "on PATH".
  const binary = path === "" ? null : which.sync(spec.command, { path, nothrow: true });
  return binary ? { binary, source: "PATH" } : { missing: `\`${spec.command}\` was not found on PATH` };
}

function checkVersion(spec: CliSpec, binary: string, env: NodeJS.ProcessEnv): { ok: true; version: string } | { ok: false; reason: string } {
  const result = spawnSync(binary, ["--version"], {
    env: childEnvironment(spec.name, spec.ownEnv, env),
    encoding: "utf8",
    timeout: VERSION_TIMEOUT_MS,
    killSignal: "SIGKILL",
    maxBuffer: 64 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
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

export function preflightCli(spec: CliSpec, env: NodeJS.ProcessEnv = process.env): Preflight {
  const found = locate(spec, env);
  if ("missing" in found) {
    return { ok: false, reason: found.missing, fix: `Install ${spec.product} (${spec.install}) or set ${spec.binVariable} to its path.` };
  }
  const stat = statSync(found.binary, { throwIfNoEntry: false });
  const key = `${found.binary}\0${stat?.size}\0${stat?.mtimeMs}`;
  const known = passed.get(key);
  const result = known !== undefined ? { ok: true as const, version: known } : checkVersion(spec, found.binary, env);
  if (!result.ok) {
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

/** One line for help and errors: available with its binary and version, or why not and the fix. */
export function describePreflight(spec: CliSpec, preflight: Preflight): string {
  return preflight.ok
    ? `available: ${spec.product} ${preflight.version} at ${preflight.binary} (found via ${preflight.source})`
    : `not available: ${preflight.reason}. ${preflight.fix}`;
}
