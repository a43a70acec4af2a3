import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

/**
 * A CLI child's process group does not hold everything it starts: a descendant that calls setsid
 * leaves the group, and one whose parent died is adopted by init. Each CLI child therefore gets
 * an environment variable with a tag of its own, which every descendant inherits; stopping the
 * child also signals every process of this user that carries the tag. Linux only (it reads
 * /proc); elsewhere the group is all there is. A descendant that clears its environment escapes.
 */
export const TAG_VARIABLE = "PI_FLOW_CLI_TAG";

export const newTag = (): string => randomBytes(12).toString("hex");

/** The processes (other than this one) whose environment carries `TAG_VARIABLE=tag`. */
export function taggedProcesses(tag: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const needle = Buffer.from(`\0${TAG_VARIABLE}=${tag}\0`);
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      // Leading NUL: the variable may be the first; environ ends each entry with NUL.
      const environ = Buffer.concat([Buffer.from("\0"), readFileSync(`/proc/${entry}/environ`)]);
      if (environ.includes(needle)) pids.push(Number(entry));
    } catch {
      // Gone already, or another user's: not ours to end.
    }
  }
  return pids;
}

/** Sends `signal` to every tagged process; true when there was any. */
export function signalTagged(tag: string, signal: NodeJS.Signals): boolean {
  const pids = taggedProcesses(tag);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // It ended in between.
    }
  }
  return pids.length > 0;
}
