import { randomBytes } from "node:crypto";
import { ownedProcesses, startOf, TAG_VARIABLE } from "./process-scan.mjs";

/**
 * A CLI child's process group does not hold everything it starts: a descendant that calls setsid
 * leaves the group, and one whose parent died is adopted by init. Each CLI child therefore gets
 * an environment variable with a tag of its own, which every descendant inherits; stopping the
 * child also signals every process of this user that carries the tag. Linux only (it reads
 * /proc); elsewhere the group is all there is. A CLI child is spawned detached, so it also leads a
 * session: a descendant that clears its environment but stays in the session (its own process
 * group, as a shell's job control gives a background job) is found by its session, and a
 * descendant of anything found by its parent. Only one that both calls setsid and clears its
 * environment, once its parent has exited, escapes.
 */
export { TAG_VARIABLE, taggedProcesses } from "./process-scan.mjs";

export const newTag = (): string => randomBytes(12).toString("hex");

/** One process, told from a later one that reuses its pid by when it started. */
export interface TaggedProcess {
  pid: number;
  start: string;
}

/** The session a CLI child leads: its pid, and its start (a later process reusing the pid leads another). */
export interface ChildSession {
  id: number;
  start: string | undefined;
}

/**
 * The child's processes now: tagged, in its session, or descended from those. The tag is only
 * found while a process has its memory: once it is exiting it no longer shows, though it is not
 * gone yet, so whoever waits for it to be gone keeps what this returns and asks `stillRunning`.
 */
export function findTagged(tag: string, session?: ChildSession): TaggedProcess[] {
  const sessions = new Map(session ? [[session.id, session.start]] : []);
  return ownedProcesses(new Set([tag]), TAG_VARIABLE, sessions).flatMap((pid) => {
    const start = startOf(pid);
    return start === undefined ? [] : [{ pid, start }];
  });
}

/** Sends `signal` to every process of the child (`findTagged`); returns them (none: nothing of it was found). */
export function signalTagged(tag: string, signal: NodeJS.Signals, session?: ChildSession): TaggedProcess[] {
  const found = findTagged(tag, session);
  for (const { pid } of found) {
    try {
      process.kill(pid, signal);
    } catch {
      // It ended in between.
    }
  }
  return found;
}

/** Those of `processes` not yet gone: still running, or exiting but not yet a zombie. Reads no more of /proc than their own stat. */
export const stillRunning = (processes: Iterable<TaggedProcess>): TaggedProcess[] => [...processes].filter(({ pid, start }) => startOf(pid) === start);
