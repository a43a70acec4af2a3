import { spawn, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { processGlobal } from "../../../runtime/process-global.ts";

/**
 * The host's side of the reaper (reaper-process.mjs): one small process per host, started with
 * the first CLI child or the first command of a pi child's bash, told of each child as it starts and ends. If the host is killed outright
 * (SIGKILL runs no exit hook), the pipe to the reaper closes and the reaper ends what was left.
 * It runs detached, in a group of its own, so a signal to the host's group does not end it first;
 * neither it nor its pipe keeps the host alive.
 */
const SCRIPT = fileURLToPath(new URL("./reaper-process.mjs", import.meta.url));

/** The host's one reaper, shared by every copy of pi-flow this process loaded (not one per reload). */
const host = processGlobal("pi-flow.cli-reaper", (): { reaper: ChildProcess | null | undefined } => ({ reaper: undefined }));

function reaperProcess(): ChildProcess | null {
  if (host.reaper !== undefined) return host.reaper;
  let reaper: ChildProcess;
  try {
    reaper = spawn(process.execPath, [SCRIPT], { detached: true, stdio: ["pipe", "ignore", "ignore"], env: {} });
  } catch {
    host.reaper = null;
    return null;
  }
  host.reaper = reaper;
  reaper.on("error", () => (host.reaper = null));
  reaper.stdin?.on("error", () => undefined); // a reaper that died cannot be told: the exit hook still runs
  reaper.unref();
  (reaper.stdin as Socket | null)?.unref();
  return reaper;
}

function tell(line: string): void {
  const process = reaperProcess();
  if (process?.stdin?.writable) process.stdin.write(`${line}\n`);
}

/** A CLI child started: its process group and tag, for the reaper to end if this host dies. */
export const reaperWatch = (group: number, tag: string): void => tell(`+${group} ${tag}`);

/** The child and everything it started have ended. */
export const reaperForget = (group: number, tag: string): void => tell(`-${group} ${tag}`);

/** A pi child's bash ran its first command: the reaper ends what carries its tag if this host dies. */
export const reaperWatchPi = (tag: string): void => tell(`+pi ${tag}`);

/** The pi child has settled and its commands have ended. */
export const reaperForgetPi = (tag: string): void => tell(`-pi ${tag}`);
