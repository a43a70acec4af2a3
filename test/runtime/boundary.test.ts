// What a script sends across the sandbox boundary can fail its own run, never the host: deep
// values, huge error texts, prototype keys, memory held on the host, and CPU spent spinning.
import { describe, expect, it } from "vitest";
import { decodeJson, jsonDepth, JsonBoundaryError } from "../../runtime/json.ts";
import { isMainToWorker, isWorkerToMain } from "../../runtime/protocol.ts";
import { believedRunning } from "../../runtime/cpu-watchdog.ts";
import { MAX_ERROR_MESSAGE_CHARS, MAX_NAME_CHARS, MAX_STACK_CHARS } from "../../runtime/text.ts";
import type { AgentResult } from "../../runtime/index.ts";
import { deferred, failure, run, slowChild, value } from "./support.ts";

const nest = (levels: number, wrap: string) => `let v = 1; for (let i = 0; i < ${levels}; i++) v = ${wrap};`;

describe("values nested past valueDepth", () => {
  it.each([5_000, 100_000])("a returned array nested %i levels fails the run with a limit error, and the host goes on", async (levels) => {
    const { result } = await run(`${nest(levels, "[v]")}\nreturn v;`);
    expect(failure(result)).toMatchObject({ kind: "limit", code: "valueDepth" });
    expect(value((await run("return 'still here';")).result)).toBe("still here");
  });

  it("names the limit when the return value is too deep", async () => {
    const { result } = await run(`${nest(101, "[v]")}\nreturn v;`);
    expect(failure(result)).toEqual({
      kind: "limit",
      code: "valueDepth",
      message: "value depth limit (100) reached: the workflow's return value nests deeper than 100 levels",
    });
  });

  it("refuses a deep store() value, agent() option and tools.* argument with catchable errors naming valueDepth", async () => {
    const calls: unknown[] = [];
    const { result } = await run(
      `${nest(5_000, "{ a: v }")}
       const caught = [];
       for (const attempt of [() => store("k", v), () => agent({ prompt: "p", outputSchema: v }), () => tools.echo(v)]) {
         try { await attempt(); caught.push("accepted"); } catch (e) { caught.push([e.name, e.code]); }
       }
       return caught;`,
      { host: { tools: { echo: async (input) => (calls.push(input), input) } } },
    );
    expect(value(result)).toEqual([
      ["RangeError", "valueDepth"],
      ["RangeError", "valueDepth"],
      ["RangeError", "valueDepth"],
    ]);
    expect(calls).toEqual([]);
  });

  it("a script that patches Object.keys or Set still cannot send a deep value across", async () => {
    const { result } = await run(
      `Object.keys = () => []; Set.prototype.add = function () { return this; };\n${nest(500, "{ a: v }")}\ntry { store("k", v); return "accepted"; } catch (e) { return e.code; }`,
    );
    expect(value(result)).toBe("valueDepth");
  });

  it("measures the value stringify sends: a toJSON or getter cannot hand the host a deeper one, and a getter is read once", async () => {
    const calls: unknown[] = [];
    const { result } = await run(
      `${nest(5_000, "[v]")}
       WeakMap.prototype.get = () => 0; WeakMap.prototype.set = function () { return this; };
       const caught = [];
       for (const sent of [() => tools.echo({ toJSON: () => v }), () => store("k", { toJSON: () => v })]) {
         try { await sent(); caught.push("accepted"); } catch (e) { caught.push([e.name, e.code]); }
       }
       let reads = 0;
       const got = await tools.echo({ get x() { return reads++ === 0 ? "first" : v; } });
       return { caught, got, reads };`,
      { host: { tools: { echo: async (input) => (calls.push(input), input) } } },
    );
    expect(value(result)).toEqual({ caught: [["RangeError", "valueDepth"], ["RangeError", "valueDepth"]], got: { x: "first" }, reads: 1 });
    expect(calls).toEqual([{ x: "first" }]);
  });

  it.each([150, 5_000, 100_000])("refuses a tools.* or agent() answer nested %i levels with a catchable valueDepth error, and the host goes on", async (levels) => {
    // Nested by the host, as a hostile tool or child would answer: past V8's own stack at 100,000.
    let deep: unknown = 1;
    for (let i = 0; i < levels; i++) deep = { a: deep };
    const { result, events } = await run(
      `const caught = [];
       for (const call of [() => tools.deep({}), () => agent({ prompt: "p" })]) {
         try { await call(); caught.push("handed"); } catch (e) { caught.push([e.name, e.code, e.message, e.runId ?? "no run"]); }
       }
       return caught;`,
      { host: { tools: { deep: async () => deep }, agent: async () => ({ runId: "child-1", output: "deep", value: deep as never }) } },
    );
    const refusal = "value depth limit (100) reached: the answer nests deeper than 100 levels";
    expect(value(result)).toEqual([
      ["RangeError", "valueDepth", refusal, "no run"],
      ["RangeError", "valueDepth", refusal, "child-1"],
    ]);
    expect(events.filter((event) => event.type === "tool_end" || event.type === "agent_end")).toEqual([
      { type: "tool_end", index: 0, name: "deep", ok: false, code: "valueDepth" },
      { type: "agent_end", index: 0, ok: false, code: "valueDepth", runId: "child-1" },
    ]);
    expect(value((await run("return 'still here';")).result)).toBe("still here");
  });

  it("ends the run at valueDepth when a too-deep answer is not caught, and hands over one that fits a raised limit", async () => {
    const nested = (levels: number) => JSON.parse("[".repeat(levels) + "]".repeat(levels)) as unknown;
    const uncaught = await run("await tools.deep({});\nreturn 'unreachable';", { host: { tools: { deep: async () => nested(101) } } });
    expect(failure(uncaught.result)).toMatchObject({ kind: "limit", code: "valueDepth" });
    const raised = await run("let d = 0; for (let v = await tools.deep({}); Array.isArray(v); v = v[0]) d++;\nreturn d;", {
      limits: { valueDepth: 1000 },
      host: { tools: { deep: async () => nested(1000) } },
    });
    expect(value(raised.result)).toBe(1000);
  });

  it("prints a value nested past valueDepth as a note, at once, not as the whole value", async () => {
    const { result } = await run(`${nest(5_000, "[v]")}
console.log(v); text({ toJSON: () => v }); return "printed";`);
    expect(value(result)).toBe("printed");
    expect(result.output).toBe("[a value nested deeper than 100 levels]\n[a value nested deeper than 100 levels]");
  });

  it("reports a cycle in a value as not JSON-serializable", async () => {
    const { result } = await run(`const a = { b: {} }; a.b.a = a;\ntry { store("k", a); } catch (e) { return [e.name, e.message]; }`);
    expect(value(result)).toEqual(["TypeError", "store() value must be JSON-serializable: circular reference"]);
  });

  it("passes a value that shares, but does not repeat, its parts", async () => {
    const { result } = await run(`const leaf = { x: 1 };\nreturn [leaf, { y: leaf }, [leaf]];`);
    expect(value(result)).toEqual([{ x: 1 }, { y: { x: 1 } }, [{ x: 1 }]]);
  });

  it("lets a run raise valueDepth up to its ceiling", async () => {
    const { result } = await run(`${nest(500, "[v]")}\nlet d = 0; for (let x = v; Array.isArray(x); x = x[0]) d++;\nreturn { d, v };`, {
      limits: { valueDepth: 1000 },
    });
    expect((value(result) as { d: number }).d).toBe(500);
  });

  it("measures depth in one pass, skipping brackets inside strings", () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[{{{"}]}')).toBe(3);
    expect(jsonDepth('"\\"[["')).toBe(0);
    expect(jsonDepth("[".repeat(1_000_000) + "]".repeat(1_000_000), 10)).toBe(11);
    expect(() => decodeJson("[".repeat(2000) + "]".repeat(2000), 1000)).toThrow(JsonBoundaryError);
    expect(() => decodeJson("{", 10)).toThrow(/not JSON/);
  });
});

describe("prototype keys", () => {
  it("drops __proto__ keys from values, spelled out or escaped", () => {
    const decoded = decodeJson('{"a":{"__proto__":{"polluted":true},"b":[{"\\u005f_proto__":1}]}}', 10) as Record<string, Record<string, unknown>>;
    expect(Object.keys(decoded.a!)).toEqual(["b"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn((decoded.a!.b as object[])[0]!, "__proto__")).toBe(false);
  });

  it("keeps store('__proto__', value) an ordinary entry of the run's store writes", async () => {
    const { result } = await run(`store("__proto__", { injected: true });\nreturn load("__proto__");`);
    expect(value(result)).toEqual({ injected: true });
    if (!result.ok) throw new Error("expected success");
    const set = result.storeWrites.set;
    expect(Object.getPrototypeOf(set)).toBeNull();
    expect(Object.hasOwn(set, "__proto__")).toBe(true);
    expect((set as Record<string, unknown>).injected).toBeUndefined();
  });
});

describe("text a script controls is bounded", () => {
  it("cuts a huge error message and stack, marks the cut, and sanitizes a huge code and name", async () => {
    const { result } = await run(`const e = new Error("E".repeat(5000000));\ne.code = "bad code!".repeat(100000);\ne.name = "N".repeat(100000);\nthrow e;`);
    const error = failure(result);
    expect(error.kind).toBe("script");
    expect(error.message.length).toBeLessThan(MAX_ERROR_MESSAGE_CHARS + 60);
    expect(error.message).toMatch(/^E+… \[\d+ more characters cut\]$/);
    expect(error.code).toMatch(/^[A-Za-z0-9_.:-]+$/);
    expect(error.code!.length).toBeLessThanOrEqual(MAX_NAME_CHARS);
    expect(error.name!.length).toBeLessThanOrEqual(MAX_NAME_CHARS);
    expect((error.stack ?? "").length).toBeLessThan(MAX_STACK_CHARS + MAX_ERROR_MESSAGE_CHARS + 200);
  });

  it("cuts a thrown non-error value", async () => {
    const { result } = await run(`throw "x".repeat(1000000);`);
    expect(failure(result).message.length).toBeLessThan(MAX_ERROR_MESSAGE_CHARS + 60);
  });
});

describe("hostBytes: what a script holds on the host at once", () => {

  it("refuses a call that would hold more than hostBytes while others are in flight, and frees the budget as they settle", async () => {
    const child = slowChild();
    const MiB = 1024 * 1024;
    const pending = run(
      `const big = "x".repeat(${MiB - 100});
       const first = agent({ prompt: big + "1" });
       let refused;
       try { await agent({ prompt: big + "2" }); } catch (e) { refused = [e.name, e.code, e.message]; }
       await first;
       const again = (await agent({ prompt: big + "3" })).value;
       return { refused, again };`,
      { limits: { hostBytes: 3 * MiB, callArgsChars: 2 * MiB }, host: { agent: child.agent } },
    );
    // The second call is refused synchronously in the worker; let the first one finish then.
    setImmediate(() => child.gate.resolve());
    const result = value((await pending).result) as { refused: [string, string, string]; again: number };
    expect(result.refused[0]).toBe("RangeError");
    expect(result.refused[1]).toBe("hostBytes");
    expect(result.refused[2]).toMatch(/^host memory limit \(3145728\) reached: agent\(\) options would make the host hold \d+ bytes/);
    expect(result.again).toBe(MiB - 99);
  });

  it("holds the attack that raised every other limit to its ceiling to hostBytes", async () => {
    // agentCalls 512 × callArgsChars 16 Mi once let a script park 34 MB per queued call on the host.
    // Building 16 MB strings near a 256 MiB heap is slow in QuickJS (it collects on each large
    // allocation): cpuMs is raised so a busy machine cannot end this run at that other limit.
    const child = slowChild();
    const pending = run(
      `export const meta = { limits: { agentCalls: 512, callArgsChars: 16777216, concurrency: 1, memoryBytes: 268435456, cpuMs: 600000 } };
       const calls = [];
       for (let i = 0; i < 8; i++) calls.push(agent({ prompt: "x".repeat(16777000) + i }));
       // agent() rejects rather than throwing: look at how each call settled.
       const settled = await Promise.allSettled(calls);
       return settled.map((s) => s.status === "fulfilled" ? "ran" : s.reason.code);`,
      { host: { agent: child.agent } },
    );
    setImmediate(() => child.gate.resolve());
    const outcomes = value((await pending).result) as string[];
    expect(outcomes.filter((outcome) => outcome === "ran").length).toBeLessThanOrEqual(2);
    expect(outcomes.filter((outcome) => outcome === "hostBytes").length).toBeGreaterThanOrEqual(6);
    expect(child.started()).toBeLessThanOrEqual(2);
  });

  it("counts the store in the same budget", async () => {
    const MiB = 1024 * 1024;
    const { result } = await run(
      `store("a", "y".repeat(${MiB / 2}));\ntry { store("b", "y".repeat(${MiB / 2})); } catch (e) { return e.code; }\nreturn "accepted";`,
      { limits: { hostBytes: MiB * 1.5, storeTotalChars: 2 * MiB, storeValueChars: MiB } },
    );
    expect(value(result)).toBe("hostBytes");
  });
});

describe("the worker's WebAssembly memory is sized for the run", () => {
  it("a run that asks for more memoryBytes than the pooled workers serve gets room for it", async () => {
    // 160 MB of strings: past a pooled worker's cap (the default 64 MiB + 64 MiB), within this run's.
    const { result } = await run("const parts = [];\nfor (let i = 0; i < 160; i++) parts.push('z'.repeat(1e6) + i);\nreturn parts.length;", {
      limits: { memoryBytes: 384 * 1024 * 1024 },
    });
    expect(value(result)).toBe(160);
  });

  it("a default run that outgrows its memory ends at its limit, and the next run is served as usual", async () => {
    const { result } = await run("let a = [];\nwhile (true) a.push('x'.repeat(1e6) + a.length);");
    expect(failure(result)).toMatchObject({ kind: "limit", code: "memoryBytes" });
    expect(value((await run("return 'next';")).result)).toBe("next");
  });
});

describe("cpuMs: the script's own execution time", () => {
  it("ends a spinning script at its CPU limit, even if the script catches", async () => {
    const { result } = await run("try { for (;;) {} } catch (e) { }\nreturn 'unreachable';", { limits: { cpuMs: 200 } });
    expect(failure(result)).toEqual({ kind: "limit", code: "cpuMs", message: "script CPU time limit (200) reached" });
  });

  it("ends a run whose one native call runs past its CPU limit, which QuickJS's own check cannot see", async () => {
    // An indexOf of a 1 MiB needle in a 4 MiB haystack is one call that would take hours; without
    // the watchdog only the wall-time limit (a minute here) would end it.
    const script = `const hay = "a".repeat(4 * 1024 * 1024);\nconst needle = "a".repeat(1024 * 1024) + "b";\nreturn hay.indexOf(needle);`;
    const { result } = await run(script, { limits: { cpuMs: 100, timeoutMs: 60_000 } });
    expect(failure(result)).toEqual({
      kind: "limit",
      code: "cpuMs",
      message: "script CPU time limit (100) reached: one operation inside the sandbox ran past it without returning",
    });
    // The worker that ran it was stopped, not left spinning: the next run gets a working sandbox.
    expect(value((await run("return 1 + 1;")).result)).toBe(2);
  });

  it("the watchdog believes a turn's stated start only within its own clock: a wall clock that steps cannot fake CPU time", () => {
    // A turn that started 300 ms ago by the wall clock, 2 s after the last look: 300 ms.
    expect(believedRunning({ sinceLastLook: 2000, byWallClock: 300 })).toBe(300);
    // The wall clock stepped an hour forward mid-turn: no more than since the last look.
    expect(believedRunning({ sinceLastLook: 2000, byWallClock: 3_600_300 })).toBe(2000);
    // It stepped back: the turn reads as just started, and is timed from here.
    expect(believedRunning({ sinceLastLook: 2000, byWallClock: -86_400_000 })).toBe(0);
  });

  it("does not count time spent awaiting children", async () => {
    const gate = deferred<void>();
    let started!: () => void;
    const childStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const pending = run("const r = await agent({ prompt: 'slow' });\nreturn r.value;", {
      limits: { cpuMs: 100 },
      host: { agent: async () => (started(), await gate.promise, { runId: "r", output: "done", value: "done" }) },
    });
    await childStarted;
    // Wait well past the CPU budget in wall time while the script only awaits, and past the
    // main thread's watchdog (cpuMs plus its one-second grace), which must not count it either.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    gate.resolve();
    expect(value((await pending).result)).toBe("done");
  });
});

describe("one run's fault stays in that run", () => {
  it("fails a run whose host throws while handling its message, while another run goes on", async () => {
    const throwingTools = new Proxy({} as Record<string, never>, {
      get() {
        throw new Error("host table exploded");
      },
      ownKeys: () => ["boom"],
      getOwnPropertyDescriptor: () => ({ configurable: true, enumerable: true, value: undefined }),
    });
    const [broken, healthy] = await Promise.all([
      run("await tools.boom({});\nreturn 'unreachable';", { host: { tools: throwingTools } }),
      run("const r = await agent({ prompt: 'a' });\nreturn r.value;"),
    ]);
    expect(failure(broken.result)).toMatchObject({ kind: "sandbox", message: expect.stringContaining("host table exploded") });
    expect(value(healthy.result)).toBe("did a");
  });

  it("fails the run, never rejecting unobserved, when a host answer cannot even be read", async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => void rejections.push(reason);
    process.on("unhandledRejection", onRejection);
    try {
      const unreadable = {
        get runId(): string {
          throw new Error("answer exploded");
        },
      } as unknown as AgentResult;
      const { result } = await run("await agent({ prompt: 'p' });\nreturn 'unreachable';", { host: { agent: async () => unreadable } });
      // As any answer that is not JSON: the script's catchable TypeError, uncaught here.
      expect(failure(result)).toMatchObject({ kind: "script", name: "TypeError", code: "host_error", message: expect.stringContaining("answer exploded") });
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("unhandledRejection", onRejection);
    }
    expect(rejections).toEqual([]);
  });

  it("checks every message at the thread boundary", () => {
    expect(isWorkerToMain({ type: "call", id: 1, kind: "agent", name: "", text: "{}" })).toBe(true);
    expect(isWorkerToMain({ type: "call", id: 0, kind: "agent", name: "", text: "{}" })).toBe(false);
    expect(isWorkerToMain({ type: "call", id: 1, kind: "spawn", name: "", text: "{}" })).toBe(false);
    expect(isWorkerToMain({ type: "done", outcome: { ok: false, error: { kind: "script", message: 5 } }, reusable: true })).toBe(false);
    expect(isWorkerToMain({ type: "done", outcome: { ok: true, text: "1" }, reusable: true })).toBe(true);
    expect(isWorkerToMain({ type: "store", key: "k", text: 1 })).toBe(false);
    expect(isWorkerToMain(null)).toBe(false);
    expect(isMainToWorker({ type: "reply", id: 3, ok: true, text: "null" })).toBe(true);
    expect(isMainToWorker({ type: "reply", id: 3, ok: false, error: {} })).toBe(false);
    expect(isMainToWorker({ type: "run" })).toBe(false);
  });
});
