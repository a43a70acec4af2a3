import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { processGlobal } from "../../../runtime/process-global.ts";
import { BoundedText } from "./bounded-text.ts";
import { LineSplitter } from "./lines.ts";
import { leaderStart } from "./process-scan.mjs";
import { findTagged, newTag, signalTagged, stillRunning, TAG_VARIABLE, type TaggedProcess } from "./process-tag.ts";
import { reaperForget, reaperWatch } from "./reaper.ts";

/**
 * One external CLI process and everything it starts.
 *
 * Contract with the caller: `startCliProcess` spawns the command in a process group of its own,
 * writes `stdin` and closes it, and hands every stdout line to `onLine`. `stop(reason)` ends the
 * whole group: SIGTERM, then SIGKILL once `killGraceMs` has passed. `exited` resolves once the
 * process has exited and its output pipes are closed, never rejects, and by then no process of the
 * group is left: a group that outlives its leader (a background job the CLI started) is ended the
 * same way, and so is every process that carries the child's tag (process-tag.ts), which a
 * descendant that left the group (setsid) still does. If the host process exits first, every group
 * still running is killed; if it is killed outright, the reaper (reaper.ts) does it.
 *
 * Lifecycle of one process:
 * 1. spawn detached (its pid is its group id) and register the group as live;
 * 2. stream stdout through a bounded line splitter (a line over `maxLineBytes` stops the process)
 *    and keep stderr bounded;
 * 3. on abort or `stop`: SIGTERM to the group, SIGKILL after the grace period;
 * 4. on the leader's exit: end what is left of the group the same way;
 * 5. when the pipes close (or, failing that, a grace period after SIGKILL): resolve `exited`.
 */

export interface CliProcessOptions {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: string;
  killGraceMs: number;
  maxLineBytes: number;
  maxStderrBytes: number;
  onLine(line: string): void;
}

export interface CliExit {
  /** Null when a signal ended the process, or it never started. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why pi-flow stopped it, if it did. */
  stopped?: string;
  /** The process could not be started at all. */
  spawnError?: string;
  /** A last line without a newline, as the stream ended. */
  unterminated?: string;
  stderr: BoundedText;
}

export interface CliProcess {
  pid: number | undefined;
  stop(reason: string): void;
  exited: Promise<CliExit>;
}

/** Group id → tag of every CLI child not yet ended. */
/** Live CLI children's process groups (pid → tag), in every copy of pi-flow this process loaded. */
const liveGroups = processGlobal("pi-flow.cli-process-groups", () => new Map<number, string>());
/** When each live CLI child (its session's leader) started, in every copy; absent for one an older copy started. */
const leaderStarts = processGlobal("pi-flow.cli-session-starts", () => new Map<number, string | undefined>());

function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** A host that exits must not leave detached children behind it: one hook, whichever copy starts a child first. */
function installExitHook(): void {
  processGlobal("pi-flow.cli-exit-hook", () =>
    process.on("exit", () => {
      for (const [pid, tag] of liveGroups) {
        signalGroup(pid, "SIGKILL");
        signalTagged(tag, "SIGKILL", leaderStarts.has(pid) ? { id: pid, start: leaderStarts.get(pid) } : undefined);
      }
    }),
  );
}

export function startCliProcess(options: CliProcessOptions): CliProcess {
  installExitHook();
  const stderr = new BoundedText(options.maxStderrBytes / 2, options.maxStderrBytes / 2);
  const tag = newTag();
  let child: ChildProcessWithoutNullStreams;
  try {
    child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: { ...options.env, [TAG_VARIABLE]: tag },
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
  } catch (error) {
    // Node reports most refusals as an 'error' event, but throws some at once (E2BIG: an argument
    // or the environment too long for the system): either way the child never started.
    const spawnError = error instanceof Error ? error.message : String(error);
    return { pid: undefined, stop: () => undefined, exited: Promise.resolve({ code: null, signal: null, spawnError, stderr }) };
  }
  const pid = child.pid;
  // Spawned detached, the child leads a session of its own, which what it starts stays in unless it calls setsid.
  const session = pid === undefined ? undefined : { id: pid, start: leaderStart(pid) };
  if (pid !== undefined) {
    liveGroups.set(pid, tag);
    leaderStarts.set(pid, session?.start);
    reaperWatch(pid, tag);
  }
  /**
   * Every tagged process found so far (pid and start → the process). One that is exiting no longer
   * shows its tag but still holds its files: it is only gone once it is a zombie or reaped.
   */
  const seen = new Map<string, TaggedProcess>();
  const remember = (found: TaggedProcess[]): TaggedProcess[] => {
    for (const one of found) seen.set(`${one.pid}:${one.start}`, one);
    return found;
  };
  /** Anything of the child left: its group, a tagged process that left the group, or one found before that is still exiting. */
  const anyLeft = (): boolean =>
    pid !== undefined && (signalGroup(pid, 0) || remember(findTagged(tag, session)).length > 0 || stillRunning(seen.values()).length > 0);

  let stopped: string | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  let ending = false;
  /** True once nothing of the group is left (or SIGKILL went out and the wait for it ran out). */
  let groupDone = false;
  let onGroupDone: () => void = () => undefined;
  const markGroupDone = () => {
    groupDone = true;
    onGroupDone();
  };
  /**
   * After SIGKILL the processes die at once, but are only gone when they are zombies or reaped: wait
   * for that, briefly. The tagged ones found so far (the last scan was as SIGKILL went out) are
   * checked again by their own stat, not by listing all of /proc.
   */
  const whenGroupGone = (group: number, then: () => void) => {
    const deadline = Date.now() + options.killGraceMs;
    const check = () => ((!signalGroup(group, 0) && stillRunning(seen.values()).length === 0) || Date.now() > deadline ? then() : void setTimeout(check, 10));
    check();
  };
  /** SIGTERM to the whole group now, SIGKILL when the grace period is over. */
  const endGroup = () => {
    if (pid === undefined || ending) return;
    ending = true;
    const signalled = signalGroup(pid, "SIGTERM");
    if (remember(signalTagged(tag, "SIGTERM", session)).length === 0 && !signalled && stillRunning(seen.values()).length === 0) {
      groupDone = true;
      return;
    }
    killTimer = setTimeout(() => {
      signalGroup(pid, "SIGKILL");
      remember(signalTagged(tag, "SIGKILL", session));
      whenGroupGone(pid, markGroupDone);
    }, options.killGraceMs);
  };
  const stop = (reason: string) => {
    stopped ??= reason;
    endGroup();
  };

  const lines = new LineSplitter(options.maxLineBytes, (line) => {
    if (stopped === undefined) options.onLine(line);
  });
  child.stdout.on("data", (chunk: Buffer) => {
    if (stopped !== undefined) return;
    lines.push(chunk);
    if (lines.overflowed) stop(`a line of its output was longer than ${options.maxLineBytes} bytes`);
  });
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  // A child that exits without reading its prompt closes the pipe under us: that is its exit's story.
  child.stdin.on("error", () => undefined);
  child.stdin.end(options.stdin);

  const exited = new Promise<CliExit>((resolve) => {
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let spawnError: string | undefined;
    let settled = false;
    let pipeTimer: NodeJS.Timeout | undefined;
    const finish = () => {
      if (settled || exit === undefined) return;
      // Something of the group is still there: it has had SIGTERM; settle once it is gone.
      if (pid !== undefined && !groupDone && anyLeft()) {
        endGroup();
        if (!groupDone) return;
      }
      settled = true;
      if (killTimer) clearTimeout(killTimer);
      if (pipeTimer) clearTimeout(pipeTimer);
      if (pid !== undefined) {
        liveGroups.delete(pid);
        leaderStarts.delete(pid);
        reaperForget(pid, tag);
      }
      const unterminated = stopped === undefined ? lines.end() : undefined;
      resolve({
        ...exit,
        stderr,
        ...(stopped !== undefined ? { stopped } : {}),
        ...(spawnError !== undefined ? { spawnError } : {}),
        ...(unterminated !== undefined ? { unterminated } : {}),
      });
    };
    onGroupDone = finish;
    child.on("error", (error) => {
      spawnError = error.message;
      if (pid === undefined) {
        exit = { code: null, signal: null };
        finish();
      }
    });
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      // The leader is gone; whatever it left in its group is ended too, which closes the pipes.
      endGroup();
      // A process that left the group can still hold the pipes: stop waiting for them after SIGKILL.
      pipeTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, options.killGraceMs * 2);
    });
    child.on("close", finish);
  });

  return { pid, stop, exited };
}
