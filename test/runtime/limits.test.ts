import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, LIMIT_CEILINGS, LIMIT_NAMES, LimitsError, resolveLimits } from "../../runtime/index.ts";
import { deferred, failure, run, value } from "./support.ts";

describe("resolveLimits", () => {
  it("gives every limit a default no higher than its ceiling", () => {
    expect(resolveLimits()).toEqual(DEFAULT_LIMITS);
    for (const name of LIMIT_NAMES) expect(DEFAULT_LIMITS[name]).toBeLessThanOrEqual(LIMIT_CEILINGS[name]);
    expect(LIMIT_NAMES).toEqual(expect.arrayContaining(["timeoutMs", "memoryBytes", "stackBytes", "agentCalls", "concurrency", "outputChars"]));
  });

  it("bounds what crosses to the host and what store() journals, with fixed defaults and ceilings", () => {
    const pick = (limits: Readonly<Record<string, number>>) =>
      Object.fromEntries(["callArgsChars", "replyChars", "storeWrites", "storeWriteChars"].map((name) => [name, limits[name]]));
    expect(pick(DEFAULT_LIMITS)).toEqual({ callArgsChars: 1024 * 1024, replyChars: 4 * 1024 * 1024, storeWrites: 1000, storeWriteChars: 16 * 1024 * 1024 });
    expect(pick(LIMIT_CEILINGS)).toEqual({ callArgsChars: 16 * 1024 * 1024, replyChars: 16 * 1024 * 1024, storeWrites: 100_000, storeWriteChars: 256 * 1024 * 1024 });
    expect(() => resolveLimits({ storeWrites: 100_001 })).toThrow("limits.storeWrites (100001) exceeds its ceiling (100000)");
  });

  it("lets a workflow fan out to thousands of children, bounded by the host byte budget", () => {
    expect(LIMIT_CEILINGS.agentCalls).toBe(4096);
    expect(resolveLimits({ agentCalls: 1000 }).agentCalls).toBe(1000);
    expect(LIMIT_CEILINGS.hostBytes).toBeLessThan(LIMIT_CEILINGS.agentCalls * LIMIT_CEILINGS.callArgsChars);
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
  it("ends a run at the wall time limit, however far it got (starting or spinning)", async () => {
    // The clock counts from runWorkflow(), sandbox start included, so a limit this short may pass
    // before the script runs or while it spins: the outcome is the same either way. That a spinning
    // VM can be stopped at all is shown below, by stopping one seen spinning.
    const { result } = await run("console.log('spin');\nwhile (true) {}", { limits: { timeoutMs: 1 } });
    expect(failure(result)).toEqual({ kind: "timeout", code: "timeoutMs", message: "wall time limit (1) reached" });
    expect(["", "spin\n"]).toContain(result.output);
  });

  it("keeps the output a stopped run printed before it was stopped, even what its worker had not sent yet", async () => {
    // The run is stopped (as its wall time limit or a cancel stops it) as soon as its first line
    // arrives: the second, printed in the same turn, then waits in the worker (output leaves at most
    // every 10 ms) or is on its way. Both lines are the run's output, in its result and its events.
    const stop = new AbortController();
    const printed: string[] = [];
    const { result } = await run("console.log('first');\nconsole.log('second');\nwhile (true) {}", {
      signal: stop.signal,
      onEvent: (event) => {
        if (event.type !== "output") return;
        printed.push(event.text);
        stop.abort();
      },
    });
    expect(failure(result)).toMatchObject({ kind: "aborted", code: "aborted" });
    expect(result.output).toBe("first\nsecond\n");
    expect(printed.join("")).toBe("first\nsecond\n");
  });

  it("keeps the host's event loop free while a script spins", async () => {
    // Once the script is seen spinning, the host's timers must keep firing: after five ticks the
    // run is stopped. A blocked event loop would never get there.
    const stop = new AbortController();
    let ticks = 0;
    let interval: NodeJS.Timeout | undefined;
    const { result } = await run("console.log('spin');\nwhile (true) {}", {
      signal: stop.signal,
      onEvent: (event) => {
        if (event.type !== "output" || interval) return;
        interval = setInterval(() => ++ticks === 5 && stop.abort(), 1);
      },
    });
    clearInterval(interval);
    expect(failure(result).kind).toBe("aborted");
    expect(result.output).toBe("spin\n");
    expect(ticks).toBeGreaterThanOrEqual(5);
  });

  it("ends a run when the signal aborts, while it spins or while it waits on a child", async () => {
    const spinning = new AbortController();
    // Aborted once the script is seen spinning, so the stop really interrupts a running VM.
    const pending = run("console.log('spin');\nwhile (true) {}", {
      signal: spinning.signal,
      onEvent: (event) => event.type === "output" && spinning.abort(),
    });
    const spun = await pending;
    expect(failure(spun.result)).toEqual({ kind: "aborted", code: "aborted", message: "the workflow run was aborted" });
    expect(spun.result.output).toBe("spin\n");

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

  it("holds a run to memoryBytes in bytes, however few blocks hold them", async () => {
    // Strings of 256 KiB each: QuickJS counts 8 bytes for each block in this build (vm-malloc.ts).
    // The runs that pass go first: a run ended at a limit takes its worker with it.
    const memoryBytes = 4 * 1024 * 1024;
    const hold = (count: number) => `const held = [];\nfor (let i = 0; i < ${count}; i++) held.push(String(i).padEnd(1 << 18, "x"));\nawait agent({ prompt: "p" });\nreturn held.length;`;
    expect(value((await run(hold(8), { limits: { memoryBytes } })).result)).toBe(8);
    // Garbage held only by cycles, which QuickJS collects late: collected when the heap passes the limit, not counted.
    const cycles = "let n = 0;\nfor (let i = 0; i < 64; i++) { const a = { i }; a.self = a; a.big = String(i).padEnd(1 << 18, 'x'); n += a.big.length; }\nreturn n;";
    expect(value((await run(cycles, { limits: { memoryBytes } })).result)).toBe(64 << 18);
    // Seen at the script's next call to the host, which the failure names.
    const limited = { kind: "limit", code: "memoryBytes", message: "memory limit (4194304) reached" };
    expect(failure((await run(hold(24), { limits: { memoryBytes } })).result)).toMatchObject({ ...limited, line: 3 });
    // 128 Ki arrays made in one native call, with no interrupt check, and returned: 384 KiB of JSON, megabytes held.
    const quick = "return Array.from({ length: 1 << 17 }, () => []);";
    expect(failure((await run(quick, { limits: { memoryBytes } })).result)).toEqual(limited);
  });

  it("ends a script that fills its memory with small objects at the memory limit, while its own throw null stays its error", async () => {
    // The last small allocation leaves no room for QuickJS's out-of-memory error: it throws null instead.
    const memoryBytes = 8 * 1024 * 1024;
    for (const script of ["let l = null;\nwhile (true) l = { l };", "let l = null;\nawait null;\nwhile (true) l = [l];"]) {
      const { result } = await run(script, { limits: { memoryBytes } });
      expect(failure(result)).toEqual({ kind: "limit", code: "memoryBytes", message: "memory limit (8388608) reached" });
    }
    // Held only by a nested function's locals: its frame would free them before the outermost one saw the null.
    const nested = [
      "function fill() { let l = null; while (true) l = { l }; }\nfill();",
      "const fill = async () => { let l = null; await null; while (true) l = [l]; };\nawait fill();",
      "class Filled { static /* a class's own start-up */ { let l = null; while (true) l = { l }; } }",
      "const o = { get filled() { let l = null; while (true) l = { l }; } };\no.filled;",
      "function* fill() { let l = null; while (true) l = { l }; }\nfill().next();",
    ];
    for (const script of nested) {
      const { result } = await run(script, { limits: { memoryBytes: 4 * 1024 * 1024 } });
      expect(failure(result)).toEqual({ kind: "limit", code: "memoryBytes", message: "memory limit (4194304) reached" });
    }
    for (const script of ["throw null;", "function own() { throw null; }\nown();", "const kept = [];\nfor (let i = 0; i < 10000; i++) kept.push({ i });\nawait null;\nthrow null;"]) {
      const { result } = await run(script, { limits: { memoryBytes } });
      expect(failure(result)).toMatchObject({ kind: "script", name: "Error", message: "uncaught null" });
    }
    // The wrapper's hand-off is in the script's scope; called with room to spare, it reports nothing.
    const called = await run("eval(\"super.uncaught(null)\");\nreturn 1;", { limits: { memoryBytes } });
    expect(value(called.result)).toBe(1);
  });

  it("ends code built at run time, and a function the guard cannot wrap, at the memory limit when they fill it, not with uncaught null", async () => {
    // None of these has a guarding catch in the frame that holds what it allocated (frame-guard.ts).
    const unguarded = [
      "eval('let l = null; while (true) l = { l };');",
      "Function('let l = null; while (true) l = { l };')();",
      "await new (Object.getPrototypeOf(async function () {}).constructor)('let l = null; await null; while (true) l = [l];')();",
      "function fill() { var fill2; function fill2() {} let l = null; while (true) l = { l }; }\nfill();",
    ];
    for (const script of unguarded) {
      const { result } = await run(script, { limits: { memoryBytes: 4 * 1024 * 1024 } });
      expect(failure(result)).toEqual({ kind: "limit", code: "memoryBytes", message: "memory limit (4194304) reached" });
    }
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
    const { result } = await run("const n = 1;\ntry { text('abcdef'); text('ghij'); } catch { }\nreturn 'unreachable';", { limits: { outputChars: 8 } });
    // The line and column of the text() call that did not fit.
    expect(failure(result)).toEqual({ kind: "limit", code: "outputChars", message: "output limit (8) reached", line: 2, column: 27 });
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

describe("limits on what crosses between the VM and the host", () => {
  it("refuses agent() options and tools.* arguments over callArgsChars before the host sees them", async () => {
    const seen: string[] = [];
    const { result, events } = await run(
      `const caught = [];
       for (const call of [() => agent({ prompt: "x".repeat(2000) }), () => tools.t("y".repeat(2000))]) {
         try { await call(); } catch (e) { caught.push([e.name, e.code, e.message]); }
       }
       await tools.t("small");
       return caught;`,
      {
        limits: { callArgsChars: 1000 },
        host: { agent: async (o) => (seen.push(o.prompt), { runId: "r", output: "", value: "" }), tools: { t: async (input) => (seen.push(String(input)), "ok") } },
      },
    );
    expect(value(result)).toEqual([
      ["RangeError", "callArgsChars", "call arguments limit (1000) reached: agent() options have 2013 characters of JSON"],
      ["RangeError", "callArgsChars", "call arguments limit (1000) reached: tools.t() arguments have 2002 characters of JSON"],
    ]);
    expect(seen).toEqual(["small"]);
    expect(events.map((e) => e.type)).toEqual(["tool_start", "tool_end"]);
  });

  it("ends the run with kind limit when an oversized call is not caught", async () => {
    const { result } = await run(`await tools.t("y".repeat(2000));`, { limits: { callArgsChars: 1000 }, host: { tools: { t: async () => "ok" } } });
    expect(failure(result)).toMatchObject({ kind: "limit", code: "callArgsChars" });
    expect(failure(result).message).toMatch(/^call arguments limit \(1000\) reached/);
  });

  it("queues tools.* calls beyond the concurrency limit, starting them in call order", async () => {
    let active = 0;
    let peak = 0;
    const started: number[] = [];
    // The agent() call reaches the host after all twelve tool calls (messages keep their order),
    // so tool calls held until then show how many the host was given at once.
    const sent = deferred<void>();
    const { result, events } = await run(
      `const all = Promise.all(Array.from({ length: 12 }, (_, i) => tools.t({ i })));
       await agent({ role: "r", prompt: "all sent" });
       return await all;`,
      {
        limits: { concurrency: 2 },
        host: {
          agent: async () => (sent.resolve(), { runId: "r", output: "", value: "" }),
          tools: {
            t: async (input) => {
              const i = (input as { i: number }).i;
              started.push(i);
              peak = Math.max(peak, ++active);
              await sent.promise;
              active--;
              return i * 2;
            },
          },
        },
      },
    );
    expect(value(result)).toEqual(Array.from({ length: 12 }, (_, i) => i * 2));
    expect(peak).toBe(2);
    expect(started).toEqual(Array.from({ length: 12 }, (_, i) => i));
    const order = events.map((e) => (e.type === "tool_start" || e.type === "tool_end" ? `${e.type}:${e.index}` : e.type));
    expect(order.slice(0, 3)).toEqual(["tool_start:0", "tool_start:1", "agent_start"]);
  });

  it("keeps tool slots apart from agent slots, so a tool call never waits behind running children", async () => {
    const child = deferred<{ runId: string; output: string; value: string }>();
    const { result } = await run(`const pending = agent({ prompt: "slow" });\nconst page = await tools.t({});\nreturn page;`, {
      // A shared slot would leave the tool call waiting until this timeout.
      limits: { concurrency: 1, timeoutMs: 10_000 },
      host: { agent: () => child.promise, tools: { t: async () => "page" } },
    });
    expect(value(result)).toBe("page");
  });

  it("rejects an answer over replyChars with a catchable error that keeps the child's runId", async () => {
    const { result, events } = await run(
      `const out = [];
       try { await agent({ prompt: "p" }); } catch (e) { out.push([e.name, e.code, e.runId, e.message]); }
       try { await tools.t({}); } catch (e) { out.push([e.name, e.code, e.message]); }
       return out;`,
      {
        limits: { replyChars: 1000 },
        host: { agent: async () => ({ runId: "r1", output: "", value: "v".repeat(2000) }), tools: { t: async () => "w".repeat(2000) } },
      },
    );
    expect(value(result)).toEqual([
      ["RangeError", "replyChars", "r1", "reply size limit (1000) reached: the answer has 2037 characters of JSON"],
      ["RangeError", "replyChars", "reply size limit (1000) reached: the answer has 2002 characters of JSON"],
    ]);
    expect(events).toContainEqual({ type: "agent_end", index: 0, ok: false, runId: "r1", code: "replyChars" });
    expect(events).toContainEqual({ type: "tool_end", index: 0, name: "t", ok: false, code: "replyChars" });
  });

  it("ends the run with kind limit when an oversized answer is not caught", async () => {
    const { result } = await run(`await tools.t({});`, { limits: { replyChars: 1000 }, host: { tools: { t: async () => "w".repeat(2000) } } });
    expect(failure(result)).toMatchObject({ kind: "limit", code: "replyChars" });
  });

  it("caps store() writes per run, deletes included, even when the live store stays small", async () => {
    const { result, events } = await run(
      `let n = 0;
       try { for (; n < 100; n += 2) { store("k", n); store("k", undefined); } } catch (e) { return [n, e.name, e.code, e.message]; }
       return [n];`,
      { limits: { storeWrites: 10 } },
    );
    expect(value(result)).toEqual([10, "RangeError", "storeWrites", "store write limit (10) reached: store() was called 10 times in this run"]);
    expect(events.filter((e) => e.type === "store")).toHaveLength(10);
  });

  it("caps the characters store() writes over a run, counting rewrites of one key", async () => {
    const { result, events } = await run(
      `let n = 0;
       try { for (; n < 10; n++) store("k", "x".repeat(38)); } catch (e) { return [n, e.code, e.message]; }
       return [n];`,
      { limits: { storeWriteChars: 100 } },
    );
    // Each write is 1 key char + 40 JSON chars: two fit in 100, the third does not.
    expect(value(result)).toEqual([2, "storeWriteChars", "store write size limit (100) reached: store() would have written 123 characters in this run"]);
    expect(events.filter((e) => e.type === "store")).toHaveLength(2);
  });

  it("counts a deleted key's characters against storeWriteChars: deletes of a huge key cannot flood the journal", async () => {
    const { result, events } = await run(
      `const key = "k".repeat(40);
       let n = 0;
       try { for (; n < 10; n++) store(key, undefined); } catch (e) { return [n, e.code, e.message]; }
       return [n];`,
      { limits: { storeWriteChars: 100 } },
    );
    expect(value(result)).toEqual([2, "storeWriteChars", "store write size limit (100) reached: store() would have written 120 characters in this run"]);
    expect(events.filter((e) => e.type === "store")).toHaveLength(2);
  });

  it("fails the run with kind limit when a store write limit error is not caught", async () => {
    const { result } = await run(`for (let i = 0; i < 5; i++) store("k", i);`, { limits: { storeWrites: 3 } });
    expect(failure(result)).toMatchObject({ kind: "limit", code: "storeWrites" });
  });
});
