// A git that has to be stopped (past its time limit, or its output past its cap) may have started
// processes of its own (`worktree add` runs git again, a filter runs a program): they are stopped with
// it. git stays in pi-flow's own process group, so it dies with it (a closed terminal, a killed
// group) as it always did; its descendants are found by their parent IDs (Linux's /proc).
import { readdirSync, readFileSync } from "node:fs";

/** Each process's parent, from /proc; empty where there is no /proc (then only git itself is stopped). */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return parentOf;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name (in parentheses) may hold spaces and parentheses: the fields follow its last ")".
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parentOf.set(Number(entry), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  return parentOf;
}

/** `pid` and every process it started, and they started, found before any is stopped (a stopped parent's children move to init). */
function treeOf(pid: number): number[] {
  const parentOf = parents();
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, parent] of parentOf) if (parent === tree[i] && !tree.includes(child)) tree.push(child);
  }
  return tree;
}

const signal = (pid: number, name: NodeJS.Signals): void => {
  try {
    process.kill(pid, name);
  } catch {
    // ended already
  }
};

/**
 * SIGKILLs `pid` and its descendants. Each is stopped (SIGSTOP) as it is found, and the tree read
 * again until no new one shows: a process started while /proc was read is not missed.
 */
export function killTree(pid: number | undefined): void {
  if (pid === undefined) return;
  const stopped = new Set<number>();
  for (let found = [pid]; found.some((each) => !stopped.has(each)); found = treeOf(pid)) {
    for (const each of found) {
      if (stopped.has(each)) continue;
      signal(each, "SIGSTOP");
      stopped.add(each);
    }
  }
  for (const each of stopped) signal(each, "SIGKILL");
}
