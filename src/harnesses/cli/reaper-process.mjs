// The reaper: a small process that outlives a flow (or Pi) process killed with SIGKILL, which
// runs no exit hook, and ends the children's processes that process left running. Its parent writes
// "+<group> <tag>" when a CLI child starts and "-<group> <tag>" when it has ended, and
// "+pi <tag>" once a pi child's bash runs a command and "-pi <tag>" when the child has ended (protocol 2,
// reaper.ts REAPER_PROTOCOL: raise it with every kind of line added, or an older copy's reaper ignores it);
// stdin closing means the parent is gone. Each process group still listed, every process carrying
// a CLI child's tag (PI_FLOW_CLI_TAG, process-tag.ts) and every one carrying a pi child's
// (PI_FLOW_PI_TAG, pi-bash.ts) gets SIGTERM, then SIGKILL two seconds later; then the reaper exits.
import { PI_TAG_VARIABLE, taggedProcesses } from "./process-scan.mjs";

/** CLI children: process group → tag. */
const live = new Map();
/** Pi children's tags: their commands have no group of their own to signal. */
const livePi = new Set();
let pending = "";

function signalAll(signal) {
  const targets = [];
  for (const [group, tag] of live) targets.push(-group, ...taggedProcesses(tag));
  for (const tag of livePi) targets.push(...taggedProcesses(tag, PI_TAG_VARIABLE));
  for (const pid of targets) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

process.stdin.on("data", (chunk) => {
  pending += chunk.toString("utf8");
  const lines = pending.split("\n");
  pending = lines.pop() ?? "";
  for (const line of lines) {
    const pi = /^([+-])pi ([0-9a-f]+)$/.exec(line);
    if (pi) {
      if (pi[1] === "+") livePi.add(pi[2]);
      else livePi.delete(pi[2]);
      continue;
    }
    const match = /^([+-])(\d+) ([0-9a-f]+)$/.exec(line);
    if (!match) continue;
    if (match[1] === "+") live.set(Number(match[2]), match[3]);
    else live.delete(Number(match[2]));
  }
});
process.stdin.on("close", () => {
  if (live.size === 0 && livePi.size === 0) return;
  signalAll("SIGTERM");
  setTimeout(() => signalAll("SIGKILL"), 2000);
});
