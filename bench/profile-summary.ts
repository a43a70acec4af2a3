/**
 * Where the time of a `node --cpu-prof` profile goes, within one window of the monotonic clock
 * (microseconds, as bench/fanout.ts prints with BENCH_MARKS=1): self time per function, inclusive
 * time per source file, time by the nearest pi-flow function on the stack, and time by part of a
 * child's cost (Pi's work under the pi harness, else the first part, in PARTS order, with a module
 * anywhere on the stack), largest first.
 *
 *   node bench/profile-summary.ts <file.cpuprofile> [fromUs toUs] [top]
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [file, from, to, topArg] = process.argv.slice(2);
if (!file) throw new Error("usage: profile-summary.ts <file.cpuprofile> [fromUs toUs] [top]");
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const lo = from ? Number(from) : -Infinity;
const hi = to ? Number(to) : Infinity;
const top = Number(topArg ?? "40");

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const short = (url: string) =>
  url.includes("/node_modules/") ? url.replace(/.*\/node_modules\//, "nm:") : url.replace(/^file:\/\/.*?\/(src|runtime|bench|test)\//, "$1/");
const label = (node: ProfileNode) => `${node.callFrame.functionName || "(anon)"} ${short(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;

/** The parts of a child's cost on the host, by the pi-flow modules that do them; first match wins. */
const PARTS: readonly (readonly [string, RegExp])[] = [
  ["redaction", /^src\/runs\/redact\//],
  ["the child's Pi session file", /^src\/harnesses\/pi-session-file\.ts/],
  ["group commit (main thread)", /^src\/runs\/write\/group-commit\.ts/],
  ["creating the run (folder, journal, start line)", /^src\/runs\/write\/run-creation\.ts/],
  ["run views and facts", /^src\/runs\/read\//],
  ["journal lines, output log, settling, record", /^src\/runs\/(write|journal)\/|^src\/runs\/fsio\.ts/],
  ["worker messages (runtime/)", /^runtime\//],
  ["the rest of pi-flow (orchestrator, tools, registry)", /^src\//],
];
const parts = new Map<string, number>();

/**
 * Pi's own work for a child (its session build and its turn), reached through the pi harness: the
 * sample's nearest pi-flow frame is the harness and its leaf is Pi's or Node's. The bare side does
 * this work too; counted apart, so it does not read as pi-flow's.
 */
const PI_HARNESS = /^src\/harnesses\/(pi|child-context)\.ts$/;
const PI_FOR_THE_CHILD = "Pi's work for the child, called by the pi harness";

const ours = (url: string) => /^(src|runtime)\//.test(url);
const self = new Map<string, number>();
const nearestOurs = new Map<string, number>();
const inclusiveFile = new Map<string, number>();
let total = 0;
let t = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  const delta = profile.timeDeltas[i] ?? 0;
  t += delta;
  if (t < lo || t > hi) continue;
  total += delta;
  const node = byId.get(profile.samples[i]!)!;
  self.set(label(node), (self.get(label(node)) ?? 0) + delta);
  let owner = "(outside pi-flow)";
  let ownerUrl = "";
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const frame = byId.get(id)!;
    if (ours(short(frame.callFrame.url))) {
      owner = label(frame);
      ownerUrl = short(frame.callFrame.url);
      break;
    }
  }
  nearestOurs.set(owner, (nearestOurs.get(owner) ?? 0) + delta);
  const files = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const url = short(byId.get(id)!.callFrame.url);
    if (url) files.add(url);
  }
  for (const url of files) inclusiveFile.set(url, (inclusiveFile.get(url) ?? 0) + delta);
  const leaf = node.callFrame.functionName;
  const part =
    leaf === "(garbage collector)" || leaf === "(idle)"
      ? leaf
      : PI_HARNESS.test(ownerUrl) && !ours(short(node.callFrame.url))
        ? PI_FOR_THE_CHILD
        : (PARTS.find(([, pattern]) => [...files].some((url) => pattern.test(url)))?.[0] ?? "Pi and Node (outside pi-flow)");
  parts.set(part, (parts.get(part) ?? 0) + delta);
}

const print = (title: string, entries: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
};
console.log(`window: ${(total / 1000).toFixed(1)} ms of samples`);
print("self time by function", self);
print("inclusive time by file", inclusiveFile);
print("time by the nearest pi-flow function on the stack (its own and what it calls outside pi-flow)", nearestOurs);
print("time by part of a child's cost", parts);
