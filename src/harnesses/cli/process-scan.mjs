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
