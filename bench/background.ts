/**
 * Background concurrency: 200 background `external_delegate` calls through one Pi session, at
 * several values of PI_FLOW_MAX_BACKGROUND, with children that stream their answers at 400 tok/s
 * (Pi's faux model, about 40 tokens each). Prints, per concurrency, the wall time to the last
 * delivery, the host's CPU, its event-loop lag p99 and its peak heap: what a limit buys in
 * throughput and what it costs the host. docs/delegation.md reads the default from these figures.
 *
 *   npx node bench/background.ts                 200 delegations at 1, 2, 4, 8, 16, 32
 *   BENCH_N=50 npx node bench/background.ts      fewer, for a quick look
 *   BENCH_JSON=1 npx node bench/background.ts    JSON, as stored in bench/background.baseline.json
 */
import { childAnswers } from "../test/support/children.ts";
import { startPiSession, type PiTestSession } from "../test/support/pi-session.ts";
import { backgroundDelegations, JSON_OUT, withLag } from "./support.ts";

const N = Number(process.env.BENCH_N ?? "200");
const LIMITS = [1, 2, 4, 8, 16, 32];
const TOKENS_PER_SECOND = 400;
const answer = (i: number) => `answer ${i} ${"lorem ipsum dolor ".repeat(9)}`;

/** n background delegations; resolves once the turn the last completion started has ended. */
async function delegations(pi: PiTestSession, n: number): Promise<void> {
  await backgroundDelegations(pi, n, { children: Array.from({ length: n }, (_, i) => childAnswers(answer(i))) });
  await pi.session.waitForIdle();
}

interface Row {
  limit: number;
  wallMs: number;
  cpuMs: number;
  lagP99Ms: number;
  peakHeapMiB: number;
}

async function measure(limit: number): Promise<Row> {
  const pi = await startPiSession({ tokensPerSecond: TOKENS_PER_SECOND, env: { PI_FLOW_MAX_BACKGROUND: String(limit) } });
  try {
    await delegations(pi, 4); // warm: modules, JIT, the sandbox worker
    const cpu = process.cpuUsage();
    const start = performance.now();
    const { lagP99, peakHeap } = await withLag(() => delegations(pi, N));
    const wallMs = performance.now() - start;
    const used = process.cpuUsage(cpu);
    return { limit, wallMs, cpuMs: (used.user + used.system) / 1000, lagP99Ms: lagP99, peakHeapMiB: peakHeap / 2 ** 20 };
  } finally {
    pi.dispose();
  }
}

// pi-flow's completion timers do not keep a process alive (Pi's own loop does): this one does.
setInterval(() => undefined, 1000);
const rows: Row[] = [];
if (!JSON_OUT) console.log(`${N} background delegations streaming at ${TOKENS_PER_SECOND} tok/s (Node ${process.version})\n`);
for (const limit of LIMITS) {
  const row = await measure(limit);
  rows.push(row);
  if (!JSON_OUT)
    console.log(
      `PI_FLOW_MAX_BACKGROUND=${String(limit).padEnd(3)} wall ${row.wallMs.toFixed(0).padStart(6)} ms  CPU ${row.cpuMs.toFixed(0).padStart(6)} ms  lag p99 ${row.lagP99Ms.toFixed(1).padStart(6)} ms  peak heap ${row.peakHeapMiB.toFixed(0).padStart(4)} MiB`,
    );
}
if (JSON_OUT) console.log(JSON.stringify({ node: process.version, n: N, tokensPerSecond: TOKENS_PER_SECOND, rows }, null, 2));
process.exit(0);
