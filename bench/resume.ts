/**
 * Resume benchmark: a workflow of N children (default 500) all settle, then the run is cancelled
 * while one more child hangs; resuming it must cost O(journal). Printed as ratios against a bare
 * reference measured side by side (absolute times do not hold on a shared machine):
 *
 * - planning the resume (reading the journal, checking it and folding its calls by index) against
 *   reading and parsing that journal: target ≤ 1.1x;
 * - the whole resume (N calls answered from their child runs, one live child, the new run's own
 *   journal) against running the same N children live: target ≤ 0.25x.
 *
 *   npx node bench/resume.ts                 N = 500
 *   BENCH_SCALE=0.2 npx node bench/resume.ts  N = 100, for a quick look
 *   BENCH_JSON=1 npx node bench/resume.ts     JSON, as stored in bench/resume.baseline.json
 */
import { readFileSync } from "node:fs";
import { openRunStore, RunRegistry } from "../src/runs/index.ts";
import { runFiles } from "../src/runs/home.ts";
import { planResume } from "../src/orchestrator/workflow/resume/plan.ts";
import { childAnswers, childHangs } from "../test/support/children.ts";
import { startPiSession, type PiTestSession } from "../test/support/pi-session.ts";
import { JSON_OUT, median, RatioTable, time } from "./support.ts";

const SCALE = Number(process.env.BENCH_SCALE ?? "1");
const N = Math.max(10, Math.round(500 * SCALE));
const ROUNDS = 21;
/** Rounds run first and not counted, so neither side is measured before the JIT has compiled it. */
const WARMUP = 20;

const table = new RatioTable("resume", 62);

const SCRIPT = [
  `export const meta = { limits: { agentCalls: ${N + 1}, concurrency: 32 } };`,
  `const results = await parallel(Array.from({ length: ${N} }, (_, i) => () => agent({ role: "worker", description: "c" + i, prompt: "item " + i, context: { mode: "none" } })));`,
  `const last = await agent({ role: "worker", description: "last", prompt: "the last item", context: { mode: "none" } });`,
  `return results.length + (last.value === "" ? 0 : 1);`,
].join("\n");

const answers = (n: number) => Array.from({ length: n }, (_, i) => childAnswers(`answer ${i}`));

/** A run of N settled children, cancelled while its last child hangs. */
async function interruptedRun(pi: PiTestSession): Promise<string> {
  let hanging!: () => void;
  const last = new Promise<void>((resolve) => (hanging = resolve));
  const call = await pi.callTool("external_workflow", { script: SCRIPT, background: true }, { children: [...answers(N), childHangs(hanging)] });
  const runId = (call.structuredContent as { data: { run: { runId: string } } }).data.run.runId;
  await last;
  await pi.callTool("external_runs", { action: "cancel", runIds: [runId] });
  await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
  return runId;
}

async function settledMs(pi: PiTestSession, args: Record<string, unknown>, children: ReturnType<typeof answers>): Promise<number> {
  const start = performance.now();
  const call = await pi.callTool("external_workflow", args, { children });
  const elapsed = performance.now() - start;
  const receipt = call.structuredContent as { ok: boolean };
  if (!receipt.ok) throw new Error(`run failed: ${call.text.slice(0, 400)}`);
  return elapsed;
}

const pi = await startPiSession();
try {
  const runId = await interruptedRun(pi);
  // A fresh reader, as a new process would be: nothing of the run in its registry.
  const store = openRunStore({ home: pi.flowHome, cwd: pi.cwd, sessionId: pi.session.sessionId, registry: new RunRegistry() });
  const journal = runFiles(store.scope, runId).journal;

  const plan: number[] = [];
  const read: number[] = [];
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    // Alternate, so load on a shared machine falls on both alike.
    const bare = time(() => readFileSync(journal, "utf8").split("\n").filter(Boolean).forEach((line) => JSON.parse(line)));
    const planned = time(() => {
      const result = planResume(store, runId);
      if (!("plan" in result) || result.plan.agents.size !== N + 1) throw new Error("the plan lost calls");
    });
    if (round < WARMUP) continue;
    read.push(bare);
    plan.push(planned);
  }
  table.row(`plan a resume of ${N} settled children vs read + parse its journal`, median(plan), median(read), 1.1);

  const resumed = await settledMs(pi, { resume: runId }, answers(1));
  const live = await settledMs(pi, { script: SCRIPT }, answers(N + 1));
  table.row(`resume ${N} settled children end to end vs run them live`, resumed, live, 0.25);
} finally {
  pi.dispose();
}

if (JSON_OUT) console.log(JSON.stringify({ node: process.version, scale: SCALE, children: N, rows: table.rows }, null, 2));
