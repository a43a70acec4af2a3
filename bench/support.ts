/**
 * What the benchmarks share: rows of ratios against a bare peer, printed as they are measured (or
 * kept for `BENCH_JSON=1`), and the background delegations whose deliveries they count.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { join } from "node:path";
import {
  createAgentSession,
  DefaultResourceLoader,
  ModelRuntime,
  SessionManager,
  SettingsManager,
  type AgentSession,
} from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, type Api, type Model } from "@earendil-works/pi-ai";
import { BUILTIN_ROLES } from "../src/harnesses/roles.ts";
import type { PiTestSession, TurnScript } from "../test/support/pi-session.ts";

export const JSON_OUT = process.env.BENCH_JSON === "1";

export interface RatioRow {
  name: string;
  flow: number;
  bare: number;
  ratio: number;
  target: number;
  unit: string;
  /** Each round's ratio, when the row was measured in rounds (rowOfRounds). */
  rounds?: readonly number[];
}

/** Rows of `pi-flow / bare` with their targets; each is printed with its verdict unless JSON is asked for. */
export class RatioTable {
  readonly rows: RatioRow[] = [];
  private readonly label: string;
  private readonly width: number;

  constructor(label = "pi-flow", width = 58) {
    this.label = label;
    this.width = width;
  }

  row(name: string, flow: number, bare: number, target: number, unit = "ms", rounds?: readonly number[]): void {
    const ratio = flow / bare;
    this.rows.push({ name, flow, bare, ratio, target, unit, ...(rounds ? { rounds } : {}) });
    if (JSON_OUT) return;
    const verdict = ratio <= target ? "ok" : `MISS by ${(ratio / target).toFixed(2)}x`;
    const digits = flow < 10 ? 2 : 1;
    const spread = rounds && rounds.length > 1 ? `  rounds ${rounds.map((r) => `${r.toFixed(2)}x`).join(" ")}` : "";
    console.log(
      `${name.padEnd(this.width)} ${this.label} ${flow.toFixed(digits).padStart(9)} ${unit}  bare ${bare.toFixed(digits).padStart(9)} ${unit}  ${ratio.toFixed(2)}x (≤ ${target}x) ${verdict}${spread}`,
    );
  }

  /**
   * A row measured in several rounds, each a pi-flow and a bare figure taken one right after the
   * other: the round whose ratio is the median stands for the row, and every round's ratio is shown,
   * so a figure that a busy moment of a shared machine moved can be seen for what it is.
   */
  rowOfRounds(name: string, rounds: readonly { flow: number; bare: number }[], target: number, unit = "ms"): void {
    const ratios = rounds.map((round) => round.flow / round.bare);
    const middle = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!;
    const chosen = rounds[ratios.indexOf(middle)]!;
    this.row(name, chosen.flow, chosen.bare, target, unit, ratios);
  }
}

/** Pi's faux model answering `answers` in order (at `tokensPerSecond` when given), on a model runtime of its own in `dir`. */
export async function fauxModelRuntime(dir: string, answers: readonly string[], tokensPerSecond?: number): Promise<{ runtime: ModelRuntime; model: Model<Api> }> {
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }], ...(tokensPerSecond ? { tokensPerSecond } : {}) });
  faux.setResponses(answers.map((text) => fauxAssistantMessage([fauxText(text)])));
  const runtime = await ModelRuntime.create({ authPath: join(dir, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");
  return { runtime, model: faux.getModel() };
}

/** The role the workflow benches' children take; a bare session is built with it as pi-flow builds a child. */
export const workerRole = BUILTIN_ROLES.worker!;

/**
 * A bare Pi session of the worker role in `dir`: its system prompt and its tools, as pi-flow
 * configures a workflow's child, with the transcript kept in memory. The peer of a pi child.
 */
export async function bareWorkerSession(dir: string, runtime: ModelRuntime, model: Model<Api>): Promise<AgentSession> {
  const loader = new DefaultResourceLoader({ cwd: dir, agentDir: dir, noPromptTemplates: true, noThemes: true, appendSystemPrompt: [workerRole.systemPrompt] });
  await loader.reload();
  const { session } = await createAgentSession({
    cwd: dir,
    agentDir: dir,
    modelRuntime: runtime,
    model,
    resourceLoader: loader,
    settingsManager: SettingsManager.create(dir, dir),
    sessionManager: SessionManager.inMemory(dir),
    ...(workerRole.tools ? { tools: workerRole.tools } : {}),
  });
  await session.bindExtensions({});
  return session;
}

export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export function time(work: () => void): number {
  const start = performance.now();
  work();
  return performance.now() - start;
}

/**
 * `n` background delegations started by one codemode script; resolves at the last delivery, counted
 * from the session's events (a batch message counts each run it carries). Returns the parent turns
 * the completions started (the script's own turn not counted).
 */
export async function backgroundDelegations(pi: PiTestSession, n: number, children: TurnScript): Promise<number> {
  let delivered = 0;
  let turns = 0;
  let resolve!: () => void;
  const all = new Promise<void>((r) => (resolve = r));
  const stop = pi.session.subscribe((event) => {
    if (event.type === "agent_start") turns++;
    if (event.type !== "message_end") return;
    const message = event.message as { role: string; customType?: string; details?: { runs?: unknown[] } };
    if (message.role !== "custom") return;
    if (message.customType === "pi-flow-run-completed") delivered++;
    else if (message.customType === "pi-flow-runs-completed") delivered += message.details?.runs?.length ?? 0;
    if (delivered >= n) resolve();
  });
  await pi.runCodemode(
    `for (let i = 0; i < ${n}; i++) await tools.external_delegate({ role: "worker", description: "b" + i, prompt: "item " + i, context: { mode: "none" }, background: true });
     return ${n};`,
    children,
  );
  await all;
  stop();
  return turns - 1;
}

let peakHeap = 0;

// A collection before each measured window, so its heap growth is the work's, not an earlier
// row's garbage collected midway (which reads as a negative growth).
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

/** Counts the heap now toward withLag's peak: for work that never yields to its timer (bare children). */
export function sampleHeap(): void {
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
}

/**
 * The p99 of how late a 10 ms timer fires while `work` runs (the host's event-loop lag), the
 * largest heap seen at those ticks and at the end, and how far that peak rose above the heap at
 * the start (work that never yields to a timer still shows its growth by the end sample).
 */
export async function withLag<T>(work: () => Promise<T>): Promise<{ value: T; lagP99: number; peakHeap: number; heapGrowth: number }> {
  const lateness: number[] = [];
  collectGarbage();
  const heapAtStart = process.memoryUsage().heapUsed;
  peakHeap = heapAtStart;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    lateness.push(Math.max(0, now - last - 10));
    last = now;
    sampleHeap();
  }, 10);
  try {
    const value = await work();
    sampleHeap();
    const lagP99 = lateness.sort((x, y) => x - y)[Math.floor(lateness.length * 0.99)] ?? 0;
    return { value, lagP99, peakHeap, heapGrowth: peakHeap - heapAtStart };
  } finally {
    clearInterval(timer);
  }
}
