// Which process an owner names, beyond its ID: the boot it ran in and when it started. A run's
// record, a session's marker, a resume claim or a repository lock left by a process that died
// survives a restart, and its process ID comes back for another process (IDs start over at boot, and
// wrap; in a container pi-flow's own ID is often the same small number each time): an ID alone would
// take that stranger for the owner, keep its runs live and its locks held forever. Linux only
// (/proc); elsewhere both are undefined and the ID alone decides, as before.
import { readFileSync } from "node:fs";

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

/** This boot of the machine: a fresh random ID at each start. */
export const bootId = (): string | undefined => readText("/proc/sys/kernel/random/boot_id")?.trim() || undefined;

/** When the process `pid` started, in clock ticks since boot; undefined when it is gone or unknown. */
export function processStart(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // pid (comm) state ppid …: comm may hold spaces and parentheses, so the fields are counted after its last ")". starttime is field 22.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields[19];
}

export interface ProcessIdentity {
  boot?: string;
  start?: string;
}

let own: ProcessIdentity | undefined;

/** What an owner's file records of this process: read once, as neither changes while it lives. */
export function ownIdentity(): ProcessIdentity {
  if (!own) {
    const boot = bootId();
    const start = processStart(process.pid);
    own = { ...(boot ? { boot } : {}), ...(start ? { start } : {}) };
  }
  return own;
}

/** Whether the process an owner names (same host) is certainly not the one alive now under its ID: another boot, or another start. */
export function anotherProcess(owner: { pid?: unknown; boot?: unknown; start?: unknown }): boolean {
  const boot = bootId();
  if (typeof owner.boot === "string" && boot !== undefined && owner.boot !== boot) return true;
  if (typeof owner.start !== "string" || typeof owner.pid !== "number") return false;
  const start = processStart(owner.pid);
  return start !== undefined && start !== owner.start;
}
