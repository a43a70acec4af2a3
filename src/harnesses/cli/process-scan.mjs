// Finding a CLI child's tagged processes (process-tag.ts says why they carry a tag). Plain
// JavaScript: the reaper (reaper-process.mjs) runs it on bare Node, which strips no types under
// node_modules, and the host imports the same code, so both look for the same variable the same way.
import { readdirSync, readFileSync } from "node:fs";

export const TAG_VARIABLE = "PI_FLOW_CLI_TAG";
/** The variable a pi child's bash commands carry their child's tag in (pi-bash.ts). */
export const PI_TAG_VARIABLE = "PI_FLOW_PI_TAG";

/** True when process `pid`'s environment holds `needle` (`\0<variable>=<tag>\0`); false once it is gone or reaped. */
function carriesTag(pid, needle) {
  try {
    // Leading NUL: the variable may be the first; environ ends each entry with NUL. A zombie's is empty.
    return Buffer.concat([Buffer.from("\0"), readFileSync(`/proc/${pid}/environ`)]).includes(needle);
  } catch {
    // Gone already, or another user's: not ours to end.
    return false;
  }
}

const needleOf = (tag, variable) => Buffer.from(`\0${variable}=${tag}\0`);

/** The processes (other than this one) whose environment carries the tag in `variable`: one scan of /proc. */
export function taggedProcesses(tag, variable = TAG_VARIABLE) {
  let entries;
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const needle = needleOf(tag, variable);
  return entries.filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid).map(Number).filter((pid) => carriesTag(pid, needle));
}

/**
 * When process `pid` started (field 22 of /proc/<pid>/stat, in clock ticks since boot), or
 * undefined once it is a zombie or gone. A process that is exiting has already let its memory go,
 * so its environment reads empty, but it still holds its files until it is a zombie: only the
 * state says whether it is done. The start time tells a pid reused by a new process from the old.
 */
export function startOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" || fields[0] === "X" || fields[0] === "x" ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

/** The fields of /proc/<pid>/stat after the command's name (state, ppid, pgrp, session, …), or undefined once it is gone. */
function statFields(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** When process `pid` started, zombie or not: a session's leader, told from a later process that reuses its pid. */
export function leaderStart(pid) {
  return statFields(pid)?.[19];
}

/**
 * The processes (other than this one) that belong to what a host started, in one scan of /proc:
 * those whose environment carries one of `tags` in `variable`, those in one of `sessions`
 * (session id → its leader's start, or undefined when the leader is known to run: a session that a
 * new process reusing the leader's pid started is not it), and every descendant of those that still
 * has its parent. A command can drop a variable from its environment, but not leave its session
 * without setsid: together they catch what either alone misses.
 */
export function ownedProcesses(tags, variable, sessions) {
  if (tags.size === 0 && sessions.size === 0) return [];
  let entries;
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const reused = new Set();
  for (const [session, start] of sessions) if (start !== undefined && leaderStart(session) !== undefined && leaderStart(session) !== start) reused.add(session);
  const prefix = `${variable}=`;
  const owned = new Set();
  const children = new Map();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const fields = pid === process.pid ? undefined : statFields(pid);
    if (!fields) continue;
    const parent = Number(fields[1]);
    const siblings = children.get(parent);
    if (siblings) siblings.push(pid);
    else children.set(parent, [pid]);
    const session = Number(fields[3]);
    if (sessions.has(session) && !reused.has(session)) {
      owned.add(pid);
      continue;
    }
    if (tags.size === 0) continue;
    let environ;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, "latin1");
    } catch {
      continue; // gone, or another user's
    }
    if (environ.split("\0").some((entry) => entry.startsWith(prefix) && tags.has(entry.slice(prefix.length)))) owned.add(pid);
  }
  // A Set visits what is added while it is walked: descendants of descendants too.
  for (const pid of owned) for (const child of children.get(pid) ?? []) owned.add(child);
  return [...owned];
}
