// Runs on VMs a worker prepared while idle (runtime/vm-prepared.ts): real workers, real QuickJS.
// The pool keeps one worker, so every run here is served by the same worker, one after another.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../support/pi-session.ts";
import { acquireWorker, idleWorkersPrepared, releaseWorker, type PooledWorker } from "../../runtime/pool.ts";
import { configureWorkflowWorkers, shutdownWorkflowWorkers } from "../../runtime/index.ts";
import { failure, run, value } from "./support.ts";

/** The one idle worker, looked at without giving it a run: acquiring and releasing keeps its prepared VM. */
async function idleWorker(): Promise<{ threadId: number; nextVm: PooledWorker["nextVm"] }> {
  const pooled = await acquireWorker();
  const seen = { threadId: pooled.worker.threadId, nextVm: pooled.nextVm };
  releaseWorker(pooled, true);
  return seen;
}

/** Waits until the idle worker has prepared its next VM, and checks that it did. */
async function preparedWorker(): Promise<number> {
  await idleWorker(); // the pool holds a worker from here on (it starts one if it had none)
  await idleWorkersPrepared();
  const worker = await idleWorker();
  expect(worker.nextVm).toBe("ready");
  return worker.threadId;
}

// What a script can see of its global environment, in one comparable value.
const PROBE = `
const own = Object.getOwnPropertyNames(globalThis).map((name) => {
  const d = Object.getOwnPropertyDescriptor(globalThis, name);
  return [name, "value" in d ? typeof d.value : "accessor", d.writable, d.enumerable, d.configurable];
});
const pushed = [];
pushed.push(1, 2);
return {
  own,
  objectProto: Object.getOwnPropertyNames(Object.prototype).sort(),
  pushed,
  leak: typeof globalThis.leak,
  random: [Math.random(), Math.random()],
  now: [Date.now(), new Date().getTime(), Date.now === Date.now],
  args,
  tools: Object.keys(tools),
};`;

const TAMPER = `
Object.prototype.polluted = "yes";
Array.prototype.push = function () { return -1; };
globalThis.leak = "from the run before";
Math.random = () => 0.5;
Date.now = () => 0;
Date.prototype.getTime = () => 0;
Object.defineProperty(globalThis, "args", { value: "replaced" });
delete globalThis.agent;
JSON.parse = () => "forged";
return "tampered";`;

const inputs = { args: { n: 1 }, seed: "same", startedAt: 1_700_000_000_000, host: { tools: { lookup: async () => "x" } } };

beforeEach(async () => {
  configureWorkflowWorkers({ maxIdle: 1, spare: 0 });
  await shutdownWorkflowWorkers();
});

afterAll(async () => {
  configureWorkflowWorkers({ maxIdle: 2, spare: 1 });
  await shutdownWorkflowWorkers();
});

describe("a run on a prepared VM", () => {
  it("sees fresh globals after the run before it on the same worker tampered with builtins", async () => {
    // The reference: the same inputs on a worker's first VM.
    const reference = value((await run(PROBE, inputs)).result);
    const worker = await preparedWorker();

    expect(value((await run(TAMPER, inputs)).result)).toBe("tampered");
    expect(await preparedWorker()).toBe(worker);
    const after = value((await run(PROBE, inputs)).result);
    expect(await idleWorker()).toMatchObject({ threadId: worker });

    expect(after).toEqual(reference);
    expect(after).toMatchObject({ pushed: [1, 2], leak: "undefined", args: { n: 1 }, tools: ["lookup"] });
    expect((after as { objectProto: string[] }).objectProto).not.toContain("polluted");
  });

  it("gets its own args, seed and clock, as configured for it", async () => {
    const script = "return [args, Math.random(), Date.now(), String(new Date()).length > 0, Object.isFrozen(args)];";
    const runs = [
      { args: { run: "a" }, seed: "seed-a", startedAt: 1_000 },
      { args: { run: "b" }, seed: "seed-b", startedAt: 2_000 },
    ];
    const seen = [];
    for (const inputs of runs) {
      await preparedWorker();
      seen.push(value((await run(script, inputs)).result) as unknown[]);
    }
    expect(seen.map((s) => [s[0], s[2], s[4]])).toEqual([
      [{ run: "a" }, 1_000, true],
      [{ run: "b" }, 2_000, true],
    ]);
    expect(seen[0]?.[1]).not.toBe(seen[1]?.[1]);
    // The same inputs again, on a fresh worker's first VM: the very same values.
    await shutdownWorkflowWorkers();
    expect(value((await run(script, runs[0])).result)).toEqual(seen[0]);
  });

  it("cannot reach the step that configured it", async () => {
    await preparedWorker();
    const { result } = await run(`
      const names = Object.getOwnPropertyNames(globalThis);
      const functions = names.filter((n) => !["parallel", "retry", "readFinal", "handoff", "describeTool", "searchTools"].includes(n))
        .map((n) => globalThis[n]).filter((v) => typeof v === "function").map((v) => v.name);
      return {
        flowNames: names.filter((n) => n.startsWith("__flow")),
        configure: typeof configure,
        configureFunctions: functions.filter((name) => /configure|prepare|deliver/i.test(name)),
      };`);
    expect(value(result)).toEqual({ flowNames: [], configure: "undefined", configureFunctions: [] });
  });

  it("works when the run arrives while the worker is still preparing its VM", async () => {
    value((await run("return 0;")).result);
    // The worker just said "done": the pool knows it is preparing, and the next run goes to it now.
    for (let n = 1; n <= 5; n++) {
      const { result } = await run("return [args.n, Date.now(), typeof agent];", { args: { n }, startedAt: n });
      expect(value(result)).toEqual([n, n, "function"]);
    }
  });

  it("still ends at the memory and stack limits, with their codes", async () => {
    await preparedWorker();
    const memory = await run("const parts = [];\nwhile (true) parts.push({ n: parts.length });", { limits: { memoryBytes: 8 * 1024 * 1024 } });
    expect(failure(memory.result)).toEqual({ kind: "limit", code: "memoryBytes", message: "memory limit (8388608) reached" });
    // A limit ending retires the worker; the next one prepares its VM after it boots.
    await preparedWorker();
    const stack = await run("function down(n) { return down(n + 1) + 1; }\nreturn down(0);", { limits: { stackBytes: 128 * 1024 } });
    expect(failure(stack.result)).toEqual({ kind: "limit", code: "stackBytes", message: "stack limit (131072) reached" });
  });
});

describe("prepared VMs in a plain Node process", () => {
  it("prewarming, waiting for prepared VMs and running all finish, and idle workers let the process exit", () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-flow-prepared-"));
    try {
      const runtime = pathToFileURL(join(PROJECT_ROOT, "runtime", "index.ts")).href;
      const pool = pathToFileURL(join(PROJECT_ROOT, "runtime", "pool.ts")).href;
      const probe = join(dir, "probe.mts");
      writeFileSync(
        probe,
        `import { parseWorkflow, prewarmWorkflowWorkers, runWorkflow } from ${JSON.stringify(runtime)};
         import { idleWorkersPrepared } from ${JSON.stringify(pool)};
         await prewarmWorkflowWorkers(2);
         await idleWorkersPrepared();
         const result = await runWorkflow(parseWorkflow("return args.n * 2;", { origin: "inline" }), { args: { n: 21 }, host: { agent: async () => ({}) } });
         await idleWorkersPrepared();
         console.log(JSON.stringify(result.ok ? result.value : result.error));`,
      );
      // No shutdown in the probe: the process must end on its own once the run is over.
      const out = execFileSync(process.execPath, ["--no-warnings", probe], { cwd: dir, encoding: "utf8" });
      expect(out.trim()).toBe("42");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
