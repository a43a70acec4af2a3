import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, LIMIT_CEILINGS, LIMIT_NAMES, LimitsError, resolveLimits } from "../../runtime/index.ts";
import { deferred, failure, run, value } from "./support.ts";

describe("resolveLimits", () => {
  it("gives every limit a default no higher than its ceiling", () => {
    expect(resolveLimits()).toEqual(DEFAULT_LIMITS);
    for (const name of LIMIT_NAMES) expect(DEFAULT_LIMITS[name]).toBeLessThanOrEqual(LIMIT_CEILINGS[name]);
    expect(LIMIT_NAMES).toEqual(expect.arrayContaining(["timeoutMs", "memoryBytes", "stackBytes", "agentCalls", "concurrency", "outputChars"]));
  });

  it("accepts values up to the ceiling and refuses anything above it, naming the limit", () => {
    expect(resolveLimits({ agentCalls: LIMIT_CEILINGS.agentCalls, timeoutMs: undefined })).toMatchObject({
      agentCalls: LIMIT_CEILINGS.agentCalls,
      timeoutMs: DEFAULT_LIMITS.timeoutMs,
    });
    try {
      resolveLimits({ concurrency: LIMIT_CEILINGS.concurrency + 1 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(LimitsError);
      expect(error).toMatchObject({ code: "limits_invalid", limit: "concurrency" });
      expect((error as Error).message).toBe(`limits.concurrency (${LIMIT_CEILINGS.concurrency + 1}) exceeds its ceiling (${LIMIT_CEILINGS.concurrency})`);
    }
  });

  it.each([
    [{ agentCalls: 0 }, /positive integer/],
    [{ agentCalls: 1.5 }, /positive integer/],
    [{ agentCalls: "8" }, /positive integer/],
    [{ memoryBytes: 1024 }, /below its floor/],
    [{ nope: 1 }, /unknown limit/],
  ])("refuses %j", (requested, message) => {
    expect(() => resolveLimits(requested)).toThrow(message);
  });

  it("makes runWorkflow fail closed on a limit above its ceiling, before anything runs", async () => {
    const { result } = await run("return 1;", { limits: { stackBytes: LIMIT_CEILINGS.stackBytes * 2 } });
    expect(failure(result)).toMatchObject({ kind: "limit", code: "stackBytes" });
  });
});

describe("limits enforced on a running script", () => {
  it("ends a spinning script at the wall time limit", async () => {
    // Wall time counts from runWorkflow(), sandbox start included: leave room for a slow, loaded machine.
    const { result } = await run("console.log('spin');\nwhile (true) {}", { limits: { timeoutMs: 1000 } });
    expect(failure(result)).toEqual({ kind: "timeout", code: "timeoutMs", message: "wall time limit (1000) reached" });
    expect(result.output).toBe("spin\n");
  });

  it("keeps the host's event loop free while a script spins", async () => {
    let ticks = 0;
    const interval = setInterval(() => ticks++, 5);
    const { result } = await run("while (true) {}", { limits: { timeoutMs: 300 } });
    clearInterval(interval);
    expect(failure(result).kind).toBe("timeout");
    expect(ticks).toBeGreaterThan(3);
  });

  it("ends a run when the signal aborts, while it spins or while it waits on a child", async () => {
    const spinning = new AbortController();
    const pending = run("while (true) {}", { signal: spinning.signal });
    setTimeout(() => spinning.abort(), 50);
    expect(failure((await pending).result)).toEqual({ kind: "aborted", code: "aborted", message: "the workflow run was aborted" });

    const waiting = new AbortController();
    const never = deferred<never>();
    const started = deferred<void>();
    const pendingChild = run("await agent({ prompt: 'slow' });", {
      signal: waiting.signal,
      host: { agent: () => (started.resolve(), never.promise) },
    });
    await started.promise;
    waiting.abort();
    expect(failure((await pendingChild).result).kind).toBe("aborted");
  });

  it("does not start a run whose signal is already aborted", async () => {
    let calls = 0;
    const { result } = await run("await agent({ prompt: 'x' });", {
      signal: AbortSignal.abort(),
      host: { agent: async () => (calls++, { runId: "", output: "", value: "" }) },
    });
    expect(failure(result).kind).toBe("aborted");
    expect(calls).toBe(0);
  });

  it("ends a script that outgrows the memory limit", async () => {
    const { result } = await run("const parts = [];\nwhile (true) parts.push({ n: parts.length });", {
      limits: { memoryBytes: 8 * 1024 * 1024 },
    });
    expect(failure(result)).toEqual({ kind: "limit", code: "memoryBytes", message: "memory limit (8388608) reached" });
  });

  it("ends runaway recursion at the stack limit", async () => {
    const { result } = await run("function down(n) { return down(n + 1) + 1; }\nreturn down(0);", { limits: { stackBytes: 128 * 1024 } });
    expect(failure(result)).toEqual({ kind: "limit", code: "stackBytes", message: "stack limit (131072) reached" });
  });

  it("lets a script recover from a stack overflow it catches", async () => {
    const { result } = await run("function down(n) { return down(n + 1) + 1; }\ntry { down(0); } catch (e) { return e.message; }");
    expect(value(result)).toBe("stack overflow");
  });

  it("keeps output up to outputChars, then fails the run even if the script catches it", async () => {
    const { result } = await run("try { text('abcdef'); text('ghij'); } catch { }\nreturn 'unreachable';", { limits: { outputChars: 8 } });
    expect(failure(result)).toEqual({ kind: "limit", code: "outputChars", message: "output limit (8) reached" });
    expect(result.output).toBe("abcdefgh");
  });

  it("refuses a store value over storeValueChars with a catchable error naming the limit", async () => {
    const { result } = await run(`try { store("big", "x".repeat(100)); } catch (e) { return [e.name, e.code, e.message]; }`, {
      limits: { storeValueChars: 50 },
    });
    expect(value(result)).toEqual(["RangeError", "storeValueChars", 'store value limit (50) reached: store("big") value has 102 characters of JSON']);
  });

  it("fails the run with kind limit when a store limit error is not caught", async () => {
    const { result } = await run(`store("a", "x".repeat(30));\nstore("b", "x".repeat(30));`, { limits: { storeTotalChars: 50 } });
    expect(failure(result)).toMatchObject({ kind: "limit", code: "storeTotalChars" });
    expect(failure(result).message).toMatch(/^store total limit \(50\) reached/);
  });

  it("frees room in the store when a key is deleted or replaced", async () => {
    const { result } = await run(
      `store("a", "x".repeat(30));\nstore("a", "y".repeat(30));\nstore("a", undefined);\nstore("b", "z".repeat(30));\nreturn load("b").length;`,
      { limits: { storeTotalChars: 50 } },
    );
    expect(value(result)).toBe(30);
  });

  it("fails a run whose return value is larger than resultChars", async () => {
    const { result } = await run("return 'x'.repeat(200);", { limits: { resultChars: 100 } });
    expect(failure(result)).toMatchObject({ kind: "limit", code: "resultChars" });
  });
});
