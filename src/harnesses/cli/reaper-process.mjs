// The reaper: a small process that outlives a flow (or Pi) process killed with SIGKILL, which
// runs no exit hook, and ends the children's processes that process left running. Its parent writes
// "+<group> <tag>" when a CLI child starts and "-<group> <tag>" when it has ended, and
// "+pi <tag>" once a pi child's bash runs a command, "+pisession <tag> <session> <leader start>" for
// each session its commands' shells lead, and "-pi <tag>" when the child has ended (protocol 3,
// reaper.ts REAPER_PROTOCOL: raise it with every kind of line added, or an older copy's reaper ignores it);
// stdin closing means the parent is gone. Each process group still listed, every process in a listed
// CLI child's session (its group's id: it was spawned detached) or a pi child's, every process carrying
// a CLI child's tag (PI_FLOW_CLI_TAG, process-tag.ts) or a pi child's (PI_FLOW_PI_TAG, pi-bash.ts), and
// their descendants, get SIGTERM, then SIGKILL two seconds later; then the reaper exits.
import { ownedProcesses, PI_TAG_VARIABLE, TAG_VARIABLE } from "./process-scan.mjs";

/** CLI children: process group → tag. */
const live = new Map();
/** Pi children's tags → their commands' sessions (session id → leader's start, undefined when unknown). */
const livePi = new Map();
let pending = "";

function signalAll(signal) {
  const targets = [];
  const cliSessions = new Map();
  for (const group of live.keys()) {
    targets.push(-group);
    cliSessions.set(group, undefined);
  }
  targets.push(...ownedProcesses(new Set(live.values()), TAG_VARIABLE, cliSessions));
  const piSessions = new Map();
  for (const sessions of livePi.values()) for (const [session, start] of sessions) piSessions.set(session, start);
  targets.push(...ownedProcesses(new Set(livePi.keys()), PI_TAG_VARIABLE, piSessions));
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
    const session = /^\+pisession ([0-9a-f]+) (\d+) (\d+|-)$/.exec(line);
    if (session) {
      if (!livePi.has(session[1])) livePi.set(session[1], new Map());
      livePi.get(session[1]).set(Number(session[2]), session[3] === "-" ? undefined : session[3]);
      continue;
    }
    const pi = /^([+-])pi ([0-9a-f]+)$/.exec(line);
    if (pi) {
      if (pi[1] === "-") livePi.delete(pi[2]);
      else if (!livePi.has(pi[2])) livePi.set(pi[2], new Map());
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
