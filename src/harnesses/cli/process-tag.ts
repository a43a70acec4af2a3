import { randomBytes } from "node:crypto";
import { startOf, taggedProcesses } from "./process-scan.mjs";

/**
 * A CLI child's process group does not hold everything it starts: a descendant that calls setsid
 * leaves the group, and one whose parent died is adopted by init. Each CLI child therefore gets
 * an environment variable with a tag of its own, which every descendant inherits; stopping the
 * child also signals every process of this user that carries the tag. Linux only (it reads
 * /proc); elsewhere the group is all there is. A descendant that clears its environment escapes.
 */
export { TAG_VARIABLE, taggedProcesses } from "./process-scan.mjs";

export const newTag = (): string => randomBytes(12).toString("hex");

/** One process, told from a later one that reuses its pid by when it started. */
export interface TaggedProcess {
  pid: number;
  start: string;
}

/**
 * The tagged processes now. The tag is only found while a process has its memory: once it is
 * exiting it no longer shows, though it is not gone yet, so whoever waits for it to be gone keeps
 * what this returns and asks `stillRunning`.
 */
export function findTagged(tag: string): TaggedProcess[] {
  return taggedProcesses(tag).flatMap((pid) => {
    const start = startOf(pid);
    return start === undefined ? [] : [{ pid, start }];
  });
}

/** Sends `signal` to every tagged process; returns them (none: nothing carried the tag). */
export function signalTagged(tag: string, signal: NodeJS.Signals): TaggedProcess[] {
  const found = findTagged(tag);
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
