// The reaper: a small process that outlives a flow (or Pi) process killed with SIGKILL, which
// runs no exit hook, and ends the CLI children that process left running. Its parent writes
// "+<group> <tag>" when a CLI child starts and "-<group> <tag>" when it has ended; stdin closing
// means the parent is gone. Each process group still listed, and every process carrying its tag
// (process-tag.ts), gets SIGTERM, then SIGKILL two seconds later; then the reaper exits.
import { taggedProcesses } from "./process-scan.mjs";

const live = new Map();
let pending = "";

function signalAll(signal) {
  for (const [group, tag] of live) {
    for (const pid of [-group, ...taggedProcesses(tag)]) {
      try {
        process.kill(pid, signal);
      } catch {
        // Already gone.
      }
    }
  }
}

process.stdin.on("data", (chunk) => {
  pending += chunk.toString("utf8");
  const lines = pending.split("\n");
  pending = lines.pop() ?? "";
  for (const line of lines) {
    const match = /^([+-])(\d+) ([0-9a-f]+)$/.exec(line);
    if (!match) continue;
    if (match[1] === "+") live.set(Number(match[2]), match[3]);
    else live.delete(Number(match[2]));
  }
});
process.stdin.on("close", () => {
  if (live.size === 0) return;
  signalAll("SIGTERM");
  setTimeout(() => signalAll("SIGKILL"), 2000);
});
