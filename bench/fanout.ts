/**
 * Fan-out benchmark: the same children through pi-flow and as bare Pi sessions, side by side in
 * one process (Pi's faux model, same prompts, same concurrency), printed as ratios with targets.
 * Absolute times do not hold on a shared machine; the ratios are what this measures.
 *
 *   npx node bench/fanout.ts                 all figures (1,000-child workflow included)
 *   BENCH_SCALE=0.2 npx node bench/fanout.ts  smaller sizes, for a quick look
 *   BENCH_JSON=1 npx node bench/fanout.ts     JSON, as stored in bench/fanout.baseline.json
 *   BENCH_ROWS=200,1000 npx node bench/fanout.ts  only these groups of rows (200, background,
 *                                                 stream, 1000, list), e.g. under `node --cpu-prof`
 *   BENCH_ROUNDS=5 npx node bench/fanout.ts   rounds per group (3 by default; 1 for a profile)
 *   TMPDIR=/dev/shm npx node bench/fanout.ts  both sides on tmpfs: pi-flow's CPU without its disk
 *
 * Each group runs in rounds: a bare and a pi-flow measurement one right after the other, their
 * order swapped every round. A row is the round with the median ratio, printed with every round's
 * ratio: on a shared machine one round's ratio can be twice another's.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRunStore, RunRegistry } from "../src/runs/index.ts";
import { childAnswers } from "../test/support/children.ts";
import { startPiSession, type PiTestSession } from "../test/support/pi-session.ts";
import { backgroundDelegations, bareWorkerSession, fauxModelRuntime, JSON_OUT, median, RatioTable, withLag, sampleHeap } from "./support.ts";

const SCALE = Number(process.env.BENCH_SCALE ?? "1");
const size = (n: number) => Math.max(10, Math.round(n * SCALE));
const CONCURRENCY = 32;
/** The groups of rows to run: all unless BENCH_ROWS names some (a profile of one row is then not mixed with others). */
const ROWS = new Set((process.env.BENCH_ROWS ?? "200,background,stream,1000,list").split(",").map((name) => name.trim()));

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? "3"));

const table = new RatioTable();
const row = table.rowOfRounds.bind(table);
const notes: Record<string, number> = {};

function note(name: string, value: number): void {
  notes[name] = value;
  if (!JSON_OUT) console.log(`${name.padEnd(58)} ${value}`);
}

interface Measured {
  wall: number;
  /** The whole process's CPU, every thread (the sandbox worker, libuv's pool, the collector's helpers). */
  cpu: number;
  /** The host thread's own CPU, where Pi's interface runs (Linux: /proc; NaN elsewhere). */
  hostCpu: number;
  /** The part of hostCpu spent in the kernel: on this disk mostly creating files and folders. */
  hostSystem: number;
  lagP99: number;
  heapGrowth: number;
}

/** CPU ms this thread has used, in user space and in the kernel, from /proc/thread-self/stat; NaN where there is none. */
function hostThreadCpu(): { user: number; system: number } {
  try {
    const stat = readFileSync("/proc/thread-self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 }; // clock ticks of 10 ms (USER_HZ 100)
  } catch {
    return { user: Number.NaN, system: Number.NaN };
  }
}

/** Wall, CPU and event-loop lag p99 of one piece of work. */
async function measure(work: () => Promise<void>): Promise<Measured> {
  const cpu = process.cpuUsage();
  const hostStart = hostThreadCpu();
  const start = performance.now();
  const startTicks = process.hrtime.bigint();
  const { lagP99, heapGrowth } = await withLag(work);
  const wall = performance.now() - start;
  // The window on the monotonic clock a --cpu-prof profile uses, for bench/profile-summary.ts.
  if (process.env.BENCH_MARKS === "1") console.error(`window ${startTicks / 1000n} ${process.hrtime.bigint() / 1000n}`);
  const used = process.cpuUsage(cpu);
  const host = hostThreadCpu();
  const hostCpu = host.user + host.system - hostStart.user - hostStart.system;
  return { wall, cpu: (used.user + used.system) / 1000, hostCpu, hostSystem: host.system - hostStart.system, lagP99, heapGrowth };
}

/** A child's answer: short, or (streaming) about 40 tokens, several chunks at the faux model's rate. */
const answerText = (i: number, streaming: boolean) => (streaming ? `answer ${i} ${"lorem ipsum dolor ".repeat(9)}` : `answer ${i}`);
/** The rate of the streaming figures: a fast real model. */
const TOKENS_PER_SECOND = 400;

/** The bare side: n children as Pi sessions built the way pi-flow builds them, at most `concurrency` at once. */
async function bareChildren(n: number, concurrency: number, streaming = false): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-bare-"));
  const answers = Array.from({ length: n + 10 }, (_, i) => answerText(i, streaming));
  const { runtime, model } = await fauxModelRuntime(dir, answers, streaming ? TOKENS_PER_SECOND : undefined);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const session = await bareWorkerSession(dir, runtime, model);
      await session.prompt(`item ${i}`);
      sampleHeap(); // the bare side never yields to withLag's timer: count its heap per child
      session.dispose();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  rmSync(dir, { recursive: true, force: true });
}

/**
 * What creating the evidence of `n` children costs this disk now, with nothing else: per child a
 * folder and three files written once (a pi child's journal, output log and session), the floor
 * under pi-flow's durable runs. Shared disks vary by an order of magnitude from one minute to the
 * next; this figure, taken in each round beside the fan-out, says how much of its ratio is the disk's.
 */
function diskFloor(n: number): number {
  const dir = mkdtempSync(join(tmpdir(), "bench-floor-"));
  try {
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      const run = join(dir, `run-${i}`);
      mkdirSync(run, { mode: 0o700 });
      for (const name of ["journal.jsonl", "output.log", "session.jsonl"]) {
        const fd = openSync(join(run, name), "a", 0o600);
        writeSync(fd, `{"i":${i}}\n`);
        closeSync(fd);
      }
    }
    return performance.now() - start;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * ROUNDS of `bare` and `flow`, one right after the other, the bare side first in even rounds and
 * last in odd ones, so a machine that speeds up or slows down over a round weighs on both alike.
 */
async function inRounds<Flow>(bare: () => Promise<Measured>, flow: () => Promise<Flow>): Promise<{ bare: Measured; flow: Flow }[]> {
  const rounds: { bare: Measured; flow: Flow }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      const bareSide = await bare();
      rounds.push({ bare: bareSide, flow: await flow() });
    } else {
      const flowSide = await flow();
      rounds.push({ bare: await bare(), flow: flowSide });
    }
  }
  return rounds;
}

type Round = { bare: Measured; flow: Measured };

/** One figure of each round, as rowOfRounds takes them; `floor` keeps an idle-clean side from dividing by ~0. */
const figure = (rounds: readonly Round[], pick: (m: Measured) => number, floor = 0) =>
  rounds.map((round) => ({ flow: Math.max(floor, pick(round.flow)), bare: Math.max(floor, pick(round.bare)) }));

const answers = (n: number, streaming = false) => ({ children: Array.from({ length: n }, (_, i) => childAnswers(answerText(i, streaming))) });

async function workflowChildren(pi: PiTestSession, n: number, streaming = false): Promise<void> {
  const script = [
    `export const meta = { limits: { agentCalls: ${n}, concurrency: ${CONCURRENCY} } };`,
    `const results = await parallel(Array.from({ length: ${n} }, (_, i) => () => agent({ role: "worker", description: "c" + i, prompt: "item " + i, context: { mode: "none" } })));`,
    `return results.length;`,
  ].join("\n");
  const call = await pi.callTool("external_workflow", { script }, answers(n, streaming));
  const receipt = call.structuredContent as { ok: boolean; data: { run: { output: { value: unknown } } } };
  if (!receipt.ok || receipt.data.run.output.value !== n) throw new Error(`workflow of ${n} failed: ${call.text.slice(0, 400)}`);
}

/**
 * `list`'s first page with `large` and with `small` runs saved in one session (on tmpfs when there
 * is one). Calls alternate between the two, so load on a shared machine falls on both alike.
 */
function listFirstPages(large: number, small: number): { large: number; small: number } {
  const base = (() => {
    try {
      rmSync(mkdtempSync(join("/dev/shm", "bench-probe-")), { recursive: true });
      return "/dev/shm";
    } catch {
      return tmpdir();
    }
  })();
  const homes: string[] = [];
  const reader = (count: number) => {
    const home = mkdtempSync(join(base, "bench-list-"));
    homes.push(home);
    const store = openRunStore({ home, cwd: tmpdir(), sessionId: "bench", registry: new RunRegistry({ maxSettled: 16 }) });
    for (let i = 0; i < count; i++) {
      const run = store.create({ kind: i % 2 ? "agent" : "workflow", task: { description: `r${i}` }, background: false });
      run.settle({ outcome: "succeeded", value: i });
    }
    // A fresh store of the same session, as a later call sees it.
    return openRunStore({ home, cwd: tmpdir(), sessionId: "bench", registry: new RunRegistry() });
  };
  try {
    const readers = { large: reader(large), small: reader(small) };
    const samples: { large: number[]; small: number[] } = { large: [], small: [] };
    for (let i = 0; i < 400; i++) {
      for (const which of ["large", "small"] as const) {
        const t = performance.now();
        readers[which].list();
        samples[which].push(performance.now() - t);
      }
    }
    return { large: median(samples.large), small: median(samples.small) };
  } finally {
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const n200 = size(200);
  const n1000 = size(1000);
  if (!JSON_OUT) console.log(`fan-out benchmark (scale ${SCALE}, concurrency ${CONCURRENCY}, Node ${process.version})\n`);

  if (ROWS.has("200") || ROWS.has("background")) {
    // Warm both sides once (module loading, JIT), so neither pays first-use costs in the figures.
    await bareChildren(8, 8);
    const pi = await startPiSession({ env: { PI_FLOW_MAX_BACKGROUND: String(CONCURRENCY) } });
    await workflowChildren(pi, 8);

    // One round: the bare 200, then the 200-children workflow and the 200 background delegations.
    // The disk floor is taken in every round, right before the workflow: on a shared disk it can
    // move twentyfold within minutes, and each round's ratio is read against its own disk.
    const floors: number[] = [];
    const rounds = await inRounds(
      () => measure(() => bareChildren(n200, CONCURRENCY)),
      async () => {
        if (ROWS.has("200")) floors.push(diskFloor(n200));
        const workflow = ROWS.has("200") ? await measure(() => workflowChildren(pi, n200)) : undefined;
        let turns = 0;
        const background = ROWS.has("background") ? await measure(async () => void (turns = await backgroundDelegations(pi, n200, answers(n200)))) : undefined;
        return { workflow, background, turns };
      },
    );
    if (ROWS.has("200")) {
      const workflow = rounds.map(({ bare, flow }) => ({ bare, flow: flow.workflow! }));
      row(`${n200} children through one workflow: wall`, figure(workflow, (m) => m.wall), 1.3);
      row(`${n200} children through one workflow: CPU`, figure(workflow, (m) => m.cpu), 1.5);
      // No target of its own: the host thread's share of the CPU row, where Pi's interface runs.
      const host = figure(workflow, (m) => m.hostCpu);
      if (host.every((round) => Number.isFinite(round.flow))) {
        note(`${n200} children: host-thread CPU per child, pi-flow, ms`, Number((median(host.map((r) => r.flow)) / n200).toFixed(2)));
        note(`${n200} children: host-thread CPU per child, bare, ms`, Number((median(host.map((r) => r.bare)) / n200).toFixed(2)));
        // Bare sessions create no files; pi-flow's kernel time is its children's evidence on this disk.
        const system = figure(workflow, (m) => m.hostSystem);
        note(`${n200} children: of that, in the kernel, pi-flow, ms`, Number((median(system.map((r) => r.flow)) / n200).toFixed(2)));
        note(`${n200} children: of that, in the kernel, bare, ms`, Number((median(system.map((r) => r.bare)) / n200).toFixed(2)));
      }
      const floor = median(floors);
      note(`disk floor: a folder and 3 files for each of ${n200} children, ms`, Math.round(floor));
      note(`that floor over bare ${n200} children's wall (ratio points it alone adds)`, Number((floor / median(rounds.map((r) => r.bare.wall))).toFixed(2)));
      if (!JSON_OUT) console.log(`${"  the floor in each round, ms".padEnd(58)} ${floors.map((ms) => Math.round(ms)).join(" ")}`);
      // The faux model answers at once, in microtasks: nothing waits on I/O, so a host that never
      // yields shows its whole run as one lag spike. A floor of 1 ms keeps an idle-clean bare side
      // from turning noise into a huge ratio.
      row(`host event-loop lag p99 while ${n200} instant children run`, figure(workflow, (m) => m.lagP99, 1), 1.5);
    }

    if (ROWS.has("background")) {
      const background = rounds.map(({ bare, flow }) => ({ bare, flow: flow.background! }));
      row(`${n200} background delegations: wall to the last delivery`, figure(background, (m) => m.wall), 1.3);
      note(`${n200} background delegations: parent turns triggered (target ≤ 10)`, Math.max(...rounds.map((r) => r.flow.turns)));
    }
    pi.dispose();
  }

  if (ROWS.has("stream")) {
    // As a real model does: children stream their answers over time (the 400 tok/s).
    const pi = await startPiSession({ tokensPerSecond: TOKENS_PER_SECOND });
    await workflowChildren(pi, 8, true);
    const rounds = await inRounds(
      () => measure(() => bareChildren(n200, CONCURRENCY, true)),
      () => measure(() => workflowChildren(pi, n200, true)),
    );
    row(`host event-loop lag p99 while ${n200} children stream at ${TOKENS_PER_SECOND} tok/s`, figure(rounds, (m) => m.lagP99, 1), 1.5);
    row(`${n200} children streaming at ${TOKENS_PER_SECOND} tok/s: wall`, figure(rounds, (m) => m.wall), 1.15);
    pi.dispose();
  }

  if (ROWS.has("1000")) {
    if (!ROWS.has("200") && !ROWS.has("background")) await bareChildren(8, 8);
    const pi = await startPiSession();
    if (!ROWS.has("200") && !ROWS.has("background")) await workflowChildren(pi, 8);
    const rounds = await inRounds(
      () => measure(() => bareChildren(n1000, CONCURRENCY)),
      () => measure(() => workflowChildren(pi, n1000)),
    );
    row(`${n1000} children through one workflow: wall`, figure(rounds, (m) => m.wall), 1.3);
    row(`peak heap growth while ${n1000} children run and settle`, figure(rounds, (m) => m.heapGrowth / 2 ** 20), 1.5, "MiB");
    // The bound is absolute: a burst never holds the loop longer than one 60 Hz frame.
    note(`host event-loop lag p99 while ${n1000} instant children run, ms (target ≤ 17)`, Number(median(rounds.map((r) => r.flow.lagP99)).toFixed(1)));
    pi.dispose();
  }

  if (ROWS.has("list")) {
    const small = size(1000);
    const large = size(10_000);
    const pages = listFirstPages(large, small);
    table.row(`list first page: ${large} runs vs ${small}`, pages.large, pages.small, 1.2);
  }

  if (JSON_OUT) console.log(JSON.stringify({ node: process.version, scale: SCALE, rows: table.rows, notes }, null, 2));
}

await main();
process.exit(0);
