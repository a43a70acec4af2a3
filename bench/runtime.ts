// Workflow runtime benchmark. Prints every figure and its ratio to target, measured in this one run.
//   npx node bench/runtime.ts                  measure and compare with bench/runtime.baseline.json
//   npx node bench/runtime.ts --write-baseline measure and save the figures as the new baseline
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import {
  configureWorkflowWorkers,
  parseWorkflow,
  prewarmWorkflowWorkers,
  runWorkflow,
  shutdownWorkflowWorkers,
  type WorkflowHost,
} from "../runtime/index.ts";

const BASELINE = new URL("./runtime.baseline.json", import.meta.url);

interface Figure {
  name: string;
  value: number;
  unit: "ms";
  /** Upper bound the issue sets, if any. */
  target?: number;
}

const host: WorkflowHost = { agent: async (options) => ({ runId: "r", output: "", value: options.prompt }) };
const trivial = parseWorkflow("return 1;", { origin: "inline" });

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function timeRun(workflow = trivial): Promise<number> {
  const start = performance.now();
  const result = await runWorkflow(workflow, { host, limits: { agentCalls: 512 } });
  if (!result.ok) throw new Error(`bench run failed: ${result.error.message}`);
  return performance.now() - start;
}

/** A run from nothing: a new worker, QuickJS instantiated in it, a VM and the prelude. */
async function coldStart(samples: number): Promise<number[]> {
  configureWorkflowWorkers({ spare: 0, maxIdle: 0 });
  await timeRun(); // compiles the WASM module once per process; every run after reuses it
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    await shutdownWorkflowWorkers();
    times.push(await timeRun());
  }
  return times;
}

/** The floor under any cold start: an empty worker thread (plain JS, no TypeScript, no QuickJS). */
async function bareWorker(samples: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    const worker = new Worker("require('node:worker_threads').parentPort.postMessage(1)", { eval: true });
    await new Promise((resolve) => worker.once("message", resolve));
    times.push(performance.now() - start);
    await worker.terminate();
  }
  return times;
}

/** A run on a pooled worker: a fresh VM and the prelude only. */
async function warmStart(samples: number): Promise<number[]> {
  configureWorkflowWorkers({ spare: 1, maxIdle: 2 });
  await prewarmWorkflowWorkers(2);
  for (let i = 0; i < 20; i++) await timeRun();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) times.push(await timeRun());
  return times;
}

/** Host↔VM round trip of one agent() call: (run with N calls − empty run) / N. */
async function roundTrip(calls: number, repeats: number): Promise<number[]> {
  const loop = parseWorkflow(`for (let i = 0; i < ${calls}; i++) await agent({ prompt: "p" });\nreturn 1;`, { origin: "inline" });
  for (let i = 0; i < 3; i++) await timeRun(loop);
  const perCall: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const empty = await timeRun();
    const full = await timeRun(loop);
    perCall.push((full - empty) / calls);
  }
  return perCall;
}

/** The host's event-loop delay while a script spins for `spinMs`, next to an idle baseline. */
async function loopLag(spinMs: number): Promise<{ spinning: number[]; idle: number[] }> {
  const measure = async (during: () => Promise<unknown>) => {
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    await during();
    histogram.disable();
    return [50, 99, 100].map((p) => histogram.percentile(p) / 1e6);
  };
  const idle = await measure(() => new Promise((resolve) => setTimeout(resolve, spinMs)));
  const spin = parseWorkflow("while (true) {}", { origin: "inline" });
  const spinning = await measure(() => runWorkflow(spin, { host, limits: { timeoutMs: spinMs } }));
  return { spinning, idle };
}

function fmt(value: number): string {
  return value < 1 ? value.toFixed(3) : value.toFixed(2);
}

async function main(): Promise<void> {
  const floor = await bareWorker(20);
  const cold = await coldStart(20);
  const warm = await warmStart(200);
  const rt = await roundTrip(500, 5);
  const lag = await loopLag(2000);
  await shutdownWorkflowWorkers();

  const figures: Figure[] = [
    { name: "cold start p50", value: percentile(cold, 50), unit: "ms", target: 15 },
    { name: "cold start p95", value: percentile(cold, 95), unit: "ms" },
    { name: "empty worker thread p50 (Node floor)", value: percentile(floor, 50), unit: "ms" },
    { name: "warm start p50", value: percentile(warm, 50), unit: "ms" },
    { name: "warm start p95", value: percentile(warm, 95), unit: "ms" },
    { name: "agent() round trip (median of 5 x 500 calls)", value: percentile(rt, 50), unit: "ms", target: 0.5 },
    { name: "event-loop lag p50 while spinning", value: lag.spinning[0] ?? Number.NaN, unit: "ms" },
    { name: "event-loop lag p99 while spinning", value: lag.spinning[1] ?? Number.NaN, unit: "ms", target: 20 },
    { name: "event-loop lag max while spinning", value: lag.spinning[2] ?? Number.NaN, unit: "ms" },
    { name: "event-loop lag p99 idle (baseline)", value: lag.idle[1] ?? Number.NaN, unit: "ms" },
  ];

  let baseline: Record<string, number> = {};
  try {
    baseline = (JSON.parse(readFileSync(BASELINE, "utf8")) as { figures: Record<string, number> }).figures;
  } catch {
    // No baseline yet.
  }

  console.log(`workflow runtime bench — node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? "unknown"})`);
  console.log("figure".padEnd(48), "value".padStart(9), "target".padStart(8), "ratio".padStart(7), "vs baseline".padStart(12));
  for (const figure of figures) {
    const ratio = figure.target === undefined ? "" : `${(figure.value / figure.target).toFixed(2)}x`;
    const verdict = figure.target === undefined ? "" : figure.value <= figure.target ? " ok" : " MISS";
    const before = baseline[figure.name];
    const change = before === undefined ? "" : `${(figure.value / before).toFixed(2)}x`;
    console.log(
      figure.name.padEnd(48),
      `${fmt(figure.value)} ms`.padStart(9),
      (figure.target === undefined ? "" : `${figure.target} ms`).padStart(8),
      ratio.padStart(7),
      change.padStart(12),
      verdict,
    );
  }
  console.log(`cold/warm start ratio: ${(percentile(cold, 50) / percentile(warm, 50)).toFixed(1)}x`);
  console.log(`lag p99 spinning/idle: ${((lag.spinning[1] ?? 0) / (lag.idle[1] ?? 1)).toFixed(2)}x`);

  if (process.argv.includes("--write-baseline")) {
    const snapshot = { node: process.version, cpus: availableParallelism(), figures: Object.fromEntries(figures.map((f) => [f.name, Number(fmt(f.value))])) };
    writeFileSync(BASELINE, `${JSON.stringify(snapshot, null, 2)}\n`);
    console.log(`baseline written to ${BASELINE.pathname}`);
  }
}

await main();
