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

/**
 * The lines a reaper understands, by version: 1, `±<group> <tag>` (CLI children); 2 adds `±pi <tag>`
 * (pi children's commands); 3 adds `+pisession <tag> <session> <leader start>` (the sessions those
 * commands run in) and ends the processes in a CLI child's session too. reaper-process.mjs speaks
 * this one; raise it with every kind of line added.
 */
export const REAPER_PROTOCOL = 3;

/**
 * The host's reaper, shared by every copy of pi-flow this process loaded (not one per reload), and
 * the protocol it speaks. A copy loaded before `protocol` was kept started one that speaks 1. When
 * the one running is older than a line needs, a newer copy starts one of its own beside it (`newer`)
 * for such lines: the older one keeps the children it was told of, and an older copy's lines, which
 * every version understands, still go to it.
 */
interface ReaperState {
  reaper: ChildProcess | null | undefined;
  protocol?: number;
  newer?: ChildProcess | null;
  newerProtocol?: number;
}
const host = processGlobal("pi-flow.cli-reaper", (): ReaperState => ({ reaper: undefined, protocol: REAPER_PROTOCOL }));

/** A reaper process speaking REAPER_PROTOCOL, or null when none can be started. */
function startReaper(forget: () => void): ChildProcess | null {
  let reaper: ChildProcess;
  try {
    reaper = spawn(process.execPath, [SCRIPT], { detached: true, stdio: ["pipe", "ignore", "ignore"], env: {} });
  } catch {
    return null;
  }
  reaper.on("error", forget);
  reaper.stdin?.on("error", () => undefined); // a reaper that died cannot be told: the exit hook still runs
  reaper.unref();
  (reaper.stdin as Socket | null)?.unref();
  return reaper;
}

/** The reaper to tell a line of protocol `needs`: the host's one if it speaks it, else one started beside it. */
function reaperProcess(needs: number): ChildProcess | null {
  if (host.reaper === undefined) {
    host.protocol = REAPER_PROTOCOL;
    host.reaper = startReaper(() => (host.reaper = null));
    return host.reaper;
  }
  if ((host.protocol ?? 1) >= needs) return host.reaper;
  if (host.newer === undefined || (host.newerProtocol ?? 0) < needs) {
    host.newerProtocol = REAPER_PROTOCOL;
    const newer = startReaper(() => {
      if (host.newer === newer) host.newer = null;
    });
    host.newer = newer;
  }
  return host.newer;
}

function tell(line: string, needs: number): void {
  const process = reaperProcess(needs);
  if (process?.stdin?.writable) process.stdin.write(`${line}\n`);
}

/** A CLI child started: its process group and tag, for the reaper to end if this host dies. */
export const reaperWatch = (group: number, tag: string): void => tell(`+${group} ${tag}`, 1);

/** The child and everything it started have ended. */
export const reaperForget = (group: number, tag: string): void => tell(`-${group} ${tag}`, 1);

/**
 * A pi child's bash ran its first command: the reaper ends what carries its tag if this host dies.
 * Protocol 3 for every pi child's line, so its sessions go to the reaper that knows its tag.
 */
export const reaperWatchPi = (tag: string): void => tell(`+pi ${tag}`, 3);

/** A pi child's command started a session (its shell's pid, and when that started): the reaper ends what is in it too. */
export const reaperWatchPiSession = (tag: string, session: number, leaderStart: string | undefined): void =>
  tell(`+pisession ${tag} ${session} ${leaderStart ?? "-"}`, 3);

/** The pi child has settled and its commands have ended. */
export const reaperForgetPi = (tag: string): void => tell(`-pi ${tag}`, 3);
