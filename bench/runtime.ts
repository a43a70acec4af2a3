// Workflow runtime benchmark. Every target is a ratio to a bare reference measured side by side in
// this one run (absolute targets do not hold on a shared machine):
//   import of the runtime        ≤ 1.5x importing Pi's codemode extension (fresh processes)
//   cold start                   ≤ 1.3x an empty worker thread + a bare QuickJS context in it
//   warm start                   ≤ 3x   a bare QuickJS context + eval on this thread
// "warm start" is a run on an idle pooled worker that has prepared its next VM, as a user meets
// it when runs are seconds apart; "back-to-back" is run after run on one worker, each arriving
// while the worker still prepares the VM it will use (bench/README.md).
//   npx node bench/runtime.ts                  measure and compare with bench/runtime.baseline.json
//   npx node bench/runtime.ts --write-baseline measure and save the figures as the new baseline
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { newQuickJSWASMModule } from "quickjs-emscripten";
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
import { idleWorkersPrepared } from "../runtime/pool.ts";

const BASELINE = new URL("./runtime.baseline.json", import.meta.url);

interface Figure {
  name: string;
  value: number;
  unit: "ms";
  /** The bare reference's figure and the ratio this one may reach, if it has a target. */
  reference?: { name: string; value: number; maxRatio: number };
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

/** Import time of a module in a fresh process (ms, measured inside that process). */
function importTime(url: string, samples: number): number[] {
  const probe = `const t = performance.now(); await import(${JSON.stringify(url)}); console.log(performance.now() - t);`;
  return Array.from({ length: samples }, () =>
    Number(execFileSync(process.execPath, ["--input-type=module", "--no-warnings", "-e", probe], { encoding: "utf8" }).trim().split("\n").at(-1)),
  );
}

/** The bare cold reference: an empty worker thread that loads QuickJS and makes one context. */
async function bareQuickJSWorker(samples: number): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), "bench-qjs-"));
  const file = join(dir, "worker.mjs");
  const quickjs = import.meta.resolve("quickjs-emscripten");
  writeFileSync(
    file,
    `import { parentPort } from "node:worker_threads";\nimport { newQuickJSWASMModule } from ${JSON.stringify(quickjs)};\nconst m = await newQuickJSWASMModule();\nconst c = m.newContext();\nc.dispose();\nparentPort.postMessage(1);\n`,
  );
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    const worker = new Worker(file);
    await new Promise((resolve) => worker.once("message", resolve));
    times.push(performance.now() - start);
    await worker.terminate();
  }
  rmSync(dir, { recursive: true, force: true });
  return times;
}

/** The bare warm reference: a new QuickJS context, one eval, disposed (on this thread). */
async function bareContext(samples: number): Promise<number[]> {
  const module = await newQuickJSWASMModule();
  const once = () => {
    const start = performance.now();
    const context = module.newContext();
    const result = context.evalCode("1 + 1");
    if (result.error) result.error.dispose();
    else result.value.dispose();
    context.dispose();
    return performance.now() - start;
  };
  for (let i = 0; i < 20; i++) once();
  return Array.from({ length: samples }, once);
}

/**
 * A run on a warm pool: an idle worker whose next VM is prepared (the run-independent prelude
 * evaluated), so the run configures it and runs the script (or `workflow` instead of the trivial one).
 */
async function warmStart(samples: number, workflow = trivial): Promise<number[]> {
  configureWorkflowWorkers({ spare: 1, maxIdle: 2 });
  await prewarmWorkflowWorkers(2);
  for (let i = 0; i < 20; i++) await timeRun(workflow);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    await idleWorkersPrepared();
    times.push(await timeRun(workflow));
  }
  return times;
}

/** Runs one after another on a single worker: each arrives while that worker prepares its VM. */
async function backToBack(samples: number): Promise<number[]> {
  configureWorkflowWorkers({ spare: 0, maxIdle: 1 });
  await shutdownWorkflowWorkers();
  for (let i = 0; i < 20; i++) await timeRun();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) times.push(await timeRun());
  return times;
}

/** A script that reads every lazily compiled global: what a run pays when it uses the helpers. */
const allHelpers = parseWorkflow("return [parallel, retry, readFinal, handoff, describeTool, searchTools].length;", { origin: "inline" });

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
  const runtimeImport = importTime(new URL("../runtime/index.ts", import.meta.url).href, 5);
  const codemodeImport = importTime(new URL("../node_modules/@earendil-works/pi-coding-agent/dist/extensions/codemode/index.js", import.meta.url).href, 5);
  const floor = await bareWorker(20);
  const bareCold = await bareQuickJSWorker(20);
  const cold = await coldStart(20);
  const bareWarm = await bareContext(200);
  const warm = await warmStart(200);
  const warmHelpers = await warmStart(200, allHelpers);
  const serial = await backToBack(200);
  configureWorkflowWorkers({ spare: 1, maxIdle: 2 });
  const rt = await roundTrip(500, 5);
  const lag = await loopLag(2000);
  await shutdownWorkflowWorkers();

  const p50 = (samples: number[]) => percentile(samples, 50);
  const figures: Figure[] = [
    {
      name: "import runtime/index.ts p50",
      value: p50(runtimeImport),
      unit: "ms",
      reference: { name: "import of Pi codemode", value: p50(codemodeImport), maxRatio: 1.5 },
    },
    {
      name: "cold start p50",
      value: p50(cold),
      unit: "ms",
      reference: { name: "empty worker + bare QuickJS context", value: p50(bareCold), maxRatio: 1.3 },
    },
    { name: "cold start p95", value: percentile(cold, 95), unit: "ms" },
    { name: "empty worker thread p50 (Node floor)", value: p50(floor), unit: "ms" },
    {
      name: "warm start p50",
      value: p50(warm),
      unit: "ms",
      reference: { name: "bare QuickJS context + eval", value: p50(bareWarm), maxRatio: 3 },
    },
    { name: "warm start p95", value: percentile(warm, 95), unit: "ms" },
    { name: "warm start reading every helper p50", value: p50(warmHelpers), unit: "ms" },
    { name: "back-to-back runs on one worker p50", value: p50(serial), unit: "ms" },
    { name: "agent() round trip (median of 5 x 500 calls)", value: p50(rt), unit: "ms" },
    { name: "event-loop lag p99 while spinning", value: lag.spinning[1] ?? Number.NaN, unit: "ms" },
    { name: "event-loop lag p99 idle (baseline)", value: lag.idle[1] ?? Number.NaN, unit: "ms" },
    { name: "event-loop lag max while spinning", value: lag.spinning[2] ?? Number.NaN, unit: "ms" },
  ];

  let baseline: Record<string, number> = {};
  try {
    baseline = (JSON.parse(readFileSync(BASELINE, "utf8")) as { figures: Record<string, number> }).figures;
  } catch {
    // No baseline yet.
  }

  console.log(`workflow runtime bench — node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? "unknown"})`);
  console.log("figure".padEnd(46), "value".padStart(10), "reference".padStart(44), "ratio".padStart(7), "target".padStart(7), "vs baseline".padStart(12));
  for (const figure of figures) {
    const ref = figure.reference;
    const ratio = ref ? figure.value / ref.value : undefined;
    const verdict = ref && ratio !== undefined ? (ratio <= ref.maxRatio ? " ok" : ` MISS by ${(ratio / ref.maxRatio).toFixed(2)}x`) : "";
    const before = baseline[figure.name];
    console.log(
      figure.name.padEnd(46),
      `${fmt(figure.value)} ms`.padStart(10),
      (ref ? `${ref.name} ${fmt(ref.value)} ms` : "").padStart(44),
      (ratio === undefined ? "" : `${ratio.toFixed(2)}x`).padStart(7),
      (ref ? `≤ ${ref.maxRatio}x` : "").padStart(7),
      (before === undefined ? "" : `${(figure.value / before).toFixed(2)}x`).padStart(12),
      verdict,
    );
  }

  if (process.argv.includes("--write-baseline")) {
    const snapshot = {
      node: process.version,
      cpus: availableParallelism(),
      figures: Object.fromEntries(figures.map((f) => [f.name, Number(fmt(f.value))])),
      references: Object.fromEntries(figures.flatMap((f) => (f.reference ? [[f.reference.name, Number(fmt(f.reference.value))]] : []))),
    };
    writeFileSync(BASELINE, `${JSON.stringify(snapshot, null, 2)}\n`);
    console.log(`baseline written to ${BASELINE.pathname}`);
  }
}

await main();
