import { randomBytes } from "node:crypto";
import { taggedProcesses } from "./process-scan.mjs";

/**
 * A CLI child's process group does not hold everything it starts: a descendant that calls setsid
 * leaves the group, and one whose parent died is adopted by init. Each CLI child therefore gets
 * an environment variable with a tag of its own, which every descendant inherits; stopping the
 * child also signals every process of this user that carries the tag. Linux only (it reads
 * /proc); elsewhere the group is all there is. A descendant that clears its environment escapes.
 */
export { stillTagged, TAG_VARIABLE, taggedProcesses } from "./process-scan.mjs";

export const newTag = (): string => randomBytes(12).toString("hex");

/** Sends `signal` to every tagged process; returns their pids (none: nothing carried the tag). */
export function signalTagged(tag: string, signal: NodeJS.Signals): number[] {
  const pids = taggedProcesses(tag);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // It ended in between.
    }
  }
  return pids;
}
