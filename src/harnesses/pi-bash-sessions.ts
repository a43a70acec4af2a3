import { subscribe } from "node:diagnostics_channel";
import { processGlobal } from "../../runtime/process-global.ts";
import { leaderStart, PI_TAG_VARIABLE } from "./cli/process-scan.mjs";
import { reaperWatchPiSession } from "./cli/reaper.ts";

/**
 * The sessions a pi child's commands run in. Pi starts each command's shell detached, so the shell
 * leads a session of its own, and whatever it starts stays in that session unless it calls setsid,
 * however it edits its environment: a command that drops the child's tag (`env -u PI_FLOW_PI_TAG`,
 * `env -i`) is still found by its session. The shell's pid is its session's id; it is learnt as
 * Node spawns the shell (the `child_process` diagnostics channel), from the tag in the environment
 * the spawn is given, and told to the reaper, which ends these sessions too if the host is killed.
 */

/** Session id → its leader's start (a later process reusing the pid is not it): each live pi child's, by its tag. */
type Sessions = Map<number, string | undefined>;

/** What Node's ChildProcess spawns with (lib/internal/child_process.js): the environment as `NAME=value` pairs. */
interface SpawnOptions {
  envPairs?: unknown;
  detached?: boolean;
}
interface Spawning {
  pid?: number;
  spawn(options: SpawnOptions): unknown;
}

/** A pi child's commands, at most: past it the oldest sessions are forgotten (their processes still carry the tag unless they dropped it). */
const MAX_SESSIONS = 4096;

const prefix = `${PI_TAG_VARIABLE}=`;

function noteSpawn(held: Map<string, Sessions>, options: SpawnOptions, pid: number | undefined): void {
  if (pid === undefined || options.detached !== true || !Array.isArray(options.envPairs)) return;
  const pair = options.envPairs.find((entry): entry is string => typeof entry === "string" && entry.startsWith(prefix));
  const tag = pair?.slice(prefix.length);
  const sessions = tag === undefined ? undefined : held.get(tag);
  if (tag === undefined || sessions === undefined) return;
  // Not yet reaped by Node (that waits for the event loop): the pid is still the shell's, zombie or not.
  const start = leaderStart(pid);
  sessions.set(pid, start);
  for (const oldest of sessions.keys()) {
    if (sessions.size <= MAX_SESSIONS) break;
    sessions.delete(oldest);
  }
  reaperWatchPiSession(tag, pid, start);
}

/** Live pi children's sessions, in every copy of pi-flow this process loaded: the first copy subscribes, once. */
const held = processGlobal("pi-flow.pi-child-sessions", () => {
  const sessions = new Map<string, Sessions>();
  subscribe("child_process", (message) => {
    const child = (message as { process?: Spawning }).process;
    if (sessions.size === 0 || typeof child?.spawn !== "function") return;
    const spawn = child.spawn;
    child.spawn = function (this: Spawning, options: SpawnOptions) {
      const result = spawn.call(this, options);
      try {
        noteSpawn(sessions, options, this.pid);
      } catch {
        // The process is started: its tag still finds it, and a failure here must not read as the spawn's.
      }
      return result;
    };
  });
  return sessions;
});

/** From now on, the sessions of commands carrying `tag` are recorded. */
export function watchSessions(tag: string): void {
  if (!held.has(tag)) held.set(tag, new Map());
}

/** The sessions the commands of `tags` started. */
export function sessionsOf(tags: ReadonlySet<string>): Sessions {
  const all: Sessions = new Map();
  for (const tag of tags) for (const [session, start] of held.get(tag) ?? []) all.set(session, start);
  return all;
}

/** The child has ended and so has everything in its sessions. */
export function forgetSessions(tag: string): void {
  held.delete(tag);
}
