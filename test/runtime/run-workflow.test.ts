import { describe, expect, it } from "vitest";
import type { AgentOptions, WorkflowEvent } from "../../runtime/index.ts";
import { deferred, failure, hostError, run, value } from "./support.ts";

describe("runWorkflow: agent()", () => {
  it("passes options to the host as JSON and resolves to its answer", async () => {
    const seen: AgentOptions[] = [];
    const { result, events } = await run(
      `const r = await agent({ role: "reviewer", description: "d", prompt: "p", context: { mode: "none" }, skip: undefined });
       return r;`,
      { host: { agent: async (options) => (seen.push(options), { runId: "r1", output: "text", value: { verdict: "ok" }, usage: { tokens: 3 } }) } },
    );
    expect(seen).toEqual([{ role: "reviewer", description: "d", prompt: "p", context: { mode: "none" } }]);
    expect(value(result)).toEqual({ runId: "r1", output: "text", value: { verdict: "ok" }, usage: { tokens: 3 } });
    expect(events).toEqual([
      { type: "agent_start", index: 0, options: seen[0] },
      { type: "agent_end", index: 0, ok: true, runId: "r1" },
    ]);
  });

  it("turns a host rejection into a catchable FlowError with code and runId", async () => {
    const { result, events } = await run(
      `try {
         await agent({ description: "d", prompt: "x" });
       } catch (e) {
         return { name: e.name, code: e.code, runId: e.runId, message: e.message, isError: e instanceof Error };
       }`,
      { host: { agent: async () => Promise.reject(hostError("child failed", { code: "failed", runId: "r9" })) } },
    );
    expect(value(result)).toEqual({ name: "FlowError", code: "failed", runId: "r9", message: "child failed", isError: true });
    expect(events.at(-1)).toEqual({ type: "agent_end", index: 0, ok: false, runId: "r9", code: "failed" });
  });

  it("uses code host_error for a rejection without a code", async () => {
    const { result } = await run(`try { await agent({ prompt: "x" }); } catch (e) { return e.code; }`, {
      host: { agent: async () => Promise.reject(new Error("plain")) },
    });
    expect(value(result)).toBe("host_error");
  });

  it("ends the run on a fatal host error even when the script catches it", async () => {
    const { result } = await run(
      `const ask = async () => { return await agent({ role: "ghost", prompt: "x" }); };
       try { await ask(); } catch (e) { console.log("caught"); }
       return "kept going";`,
      { host: { agent: async () => Promise.reject(hostError("unknown role ghost", { code: "selection_invalid", fatal: true })) } },
    );
    // The host raised it, yet it names the script's call, in the author's columns (the function's catch moves none).
    expect(failure(result)).toEqual({ kind: "script", code: "selection_invalid", message: "unknown role ghost", line: 1, column: 45 });
    expect(result.output).toBe("");
  });

  it("pairs the start of a call that fails fatally with an agent_end carrying the host's code", async () => {
    const { events } = await run(`await agent({ role: "ghost", prompt: "x" });`, {
      host: { agent: async () => Promise.reject(hostError("unknown role ghost", { code: "selection_invalid", runId: "r7", fatal: true })) },
    });
    expect(events).toEqual([
      { type: "agent_start", index: 0, options: { role: "ghost", prompt: "x" } },
      { type: "agent_end", index: 0, ok: false, runId: "r7", code: "selection_invalid" },
    ]);
  });

  it("ends calls still running when the run ends with code run_ended, before the result", async () => {
    const { result, events } = await run(`agent({ prompt: "left running" });\ntools.slow({});\nreturn "done";`, {
      host: { agent: () => new Promise(() => {}), tools: { slow: () => new Promise(() => {}) } },
    });
    expect(value(result)).toBe("done");
    expect(events).toEqual([
      { type: "agent_start", index: 0, options: { prompt: "left running" } },
      { type: "tool_start", index: 0, name: "slow" },
      { type: "agent_end", index: 0, ok: false, code: "run_ended" },
      { type: "tool_end", index: 0, name: "slow", ok: false, code: "run_ended" },
    ]);
  });

  it("never starts the call refused by the agent call limit, and ends the ones in flight", async () => {
    const { result, events } = await run(`await Promise.all([agent({ prompt: "a" }), agent({ prompt: "b" }), agent({ prompt: "c" })]);`, {
      limits: { agentCalls: 2 },
      host: { agent: () => new Promise(() => {}) },
    });
    expect(failure(result)).toMatchObject({ kind: "limit", code: "agentCalls" });
    expect(events).toEqual([
      { type: "agent_start", index: 0, options: { prompt: "a" } },
      { type: "agent_start", index: 1, options: { prompt: "b" } },
      { type: "agent_end", index: 0, ok: false, code: "run_ended" },
      { type: "agent_end", index: 1, ok: false, code: "run_ended" },
    ]);
  });

  it("does not start queued calls while the run is ending", async () => {
    const started: string[] = [];
    const { result, events } = await run(`agent({ prompt: "a" });\nagent({ prompt: "b" });\nreturn 1;`, {
      limits: { concurrency: 1 },
      host: { agent: (options) => (started.push(options.prompt), new Promise(() => {})) },
    });
    expect(value(result)).toBe(1);
    expect(started).toEqual(["a"]);
    expect(events.map((e) => e.type)).toEqual(["agent_start", "agent_end"]);
  });

  it("aborts the signal of calls still in flight when the run ends", async () => {
    const signals: AbortSignal[] = [];
    const { result } = await run(`agent({ prompt: "left running" });\nreturn "done";`, {
      host: { agent: (_options, context) => (signals.push(context.signal), new Promise(() => {})) },
    });
    expect(value(result)).toBe("done");
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
  });

  it("rejects non-object options with a TypeError and no host call", async () => {
    const { result, events } = await run(`try { await agent("do it"); } catch (e) { return e.name + ": " + e.message; }`);
    expect(value(result)).toBe("TypeError: agent(options): options must be an object");
    expect(events).toEqual([]);
  });

  it("queues calls beyond the concurrency limit, starting them in call order", async () => {
    let active = 0;
    let peak = 0;
    const gates = Array.from({ length: 5 }, () => deferred<void>());
    const started: string[] = [];
    const pending = run(
      `return await Promise.all([0, 1, 2, 3, 4].map((i) => agent({ description: "d", prompt: String(i) }).then((r) => r.value)));`,
      {
        limits: { concurrency: 2 },
        host: {
          agent: async (options) => {
            started.push(options.prompt);
            peak = Math.max(peak, ++active);
            await gates[Number(options.prompt)]?.promise;
            active--;
            return { runId: options.prompt, output: "", value: Number(options.prompt) * 10 };
          },
        },
      },
    );
    for (const gate of gates) {
      await new Promise((r) => setTimeout(r, 5));
      gate.resolve();
    }
    const { result, events } = await pending;
    expect(value(result)).toEqual([0, 10, 20, 30, 40]);
    expect(peak).toBe(2);
    expect(started).toEqual(["0", "1", "2", "3", "4"]);
    const starts = events.filter((e): e is Extract<WorkflowEvent, { type: "agent_start" }> => e.type === "agent_start");
    expect(starts.map((e) => e.index)).toEqual([0, 1, 2, 3, 4]);
  });

  it("fails the run on the call after the agent call limit, even if caught", async () => {
    const { result, events } = await run(
      `for (let i = 0; i < 5; i++) {
         try { await agent({ description: "d", prompt: String(i) }); } catch (e) { console.log("caught", e.message); }
       }
       return "unreachable";`,
      { limits: { agentCalls: 3 } },
    );
    // The line and column of the refused call, as for any other host call's error.
    expect(failure(result)).toEqual({ kind: "limit", code: "agentCalls", message: "agent call limit (3) reached", line: 2, column: 27 });
    expect(events.filter((e) => e.type === "agent_start")).toHaveLength(3);
    expect(result.output).toBe("");
  });

  it("takes the agent call limit from meta.limits, with runWorkflow limits taking precedence", async () => {
    const script = `export const meta = { limits: { agentCalls: 1 } };\nawait agent({ prompt: "a" });\nawait agent({ prompt: "b" });\nreturn "two";`;
    expect(failure((await run(script)).result).message).toBe("agent call limit (1) reached");
    expect(value((await run(script, { limits: { agentCalls: 2 } })).result)).toBe("two");
  });
});

describe("runWorkflow: tools", () => {
  it("exposes exactly the host's tools and passes JSON both ways", async () => {
    const calls: unknown[] = [];
    const { result, events } = await run(
      `const page = await tools.lookup({ q: "x" });
       return { page, names: Object.keys(tools), has: "lookup" in tools, missing: "other" in tools };`,
      { host: { tools: { lookup: async (input) => (calls.push(input), { ok: true, data: [1, 2] }) } } },
    );
    expect(value(result)).toEqual({ page: { ok: true, data: [1, 2] }, names: ["lookup"], has: true, missing: false });
    expect(calls).toEqual([{ q: "x" }]);
    expect(events).toEqual([
      { type: "tool_start", index: 0, name: "lookup" },
      { type: "tool_end", index: 0, name: "lookup", ok: true },
    ]);
  });

  it("throws a TypeError naming the tool when it is not available", async () => {
    const { result } = await run(`try { await tools.external_delegate({}); } catch (e) { return e.name + ": " + e.message; }`, {
      host: { tools: { external_runs: async () => ({}) } },
    });
    expect(value(result)).toBe("TypeError: tools.external_delegate is not available in this workflow (available: external_runs); name the tools it calls in meta.tools");
  });

  it("rejects with the host's code when a tool fails", async () => {
    const { result } = await run(`try { await tools.t({}); } catch (e) { return [e.name, e.code, e.message]; }`, {
      host: { tools: { t: async () => Promise.reject(hostError("denied", { code: "permission_denied" })) } },
    });
    expect(value(result)).toEqual(["FlowError", "permission_denied", "denied"]);
  });

  it("hands the script a catchable FlowError for a tool that fails with a value the host cannot read", async () => {
    const unreadable = [Object.create(null), { get message(): string { throw new Error("getter"); } }, new Proxy({}, { get() { throw new Error("trap"); } })];
    for (const reason of unreadable) {
      const { result } = await run(`try { await tools.t({}); } catch (e) { return [e.name, e.code]; }`, {
        host: { tools: { t: async () => Promise.reject(reason) } },
      });
      expect(value(result)).toEqual(["FlowError", "host_error"]);
    }
  });

  it("fails the run past the tool call limit", async () => {
    const { result } = await run(`const found = [];\nfor (let i = 0; i < 4; i++) found.push(await tools.t({}));`, {
      limits: { toolCalls: 2 },
      host: { tools: { t: async () => 1 } },
    });
    expect(failure(result)).toEqual({ kind: "limit", code: "toolCalls", message: "tool call limit (2) reached", line: 2, column: 53 });
  });

  it("ends the run at the call past the limit: what the script does after it is never journaled", async () => {
    for (const [call, limits, code, message] of [
      ["tools.t({})", { toolCalls: 2 }, "toolCalls", "tool call limit (2) reached"],
      ["agent({ prompt: 'p' })", { agentCalls: 2 }, "agentCalls", "agent call limit (2) reached"],
    ] as const) {
      const { result, events } = await run(`${call}; ${call}; ${call}.catch(() => {});\nstore("after", 1);\ntext("after the refused call");`, {
        limits,
        host: { tools: { t: async () => 1 } },
      });
      // Where the third call opens its parenthesis.
      expect(failure(result)).toEqual({ kind: "limit", code, message, line: 1, column: 2 * `${call}; `.length + call.indexOf("(") + 1 });
      expect(result.output).toBe("");
      expect(events.filter((event) => event.type === "store")).toEqual([]);
      expect(events.filter((event) => event.type === "tool_start" || event.type === "agent_start")).toHaveLength(2);
    }
  });
});

describe("runWorkflow: store and load", () => {
  it("keeps JSON copies, reports writes and deletions, and journals them as events", async () => {
    const { result, events } = await run(
      `const value = { list: [1] };
       store("a", value);
       value.list.push(2);
       const first = load("a");
       first.list.push(3);
       store("gone", 1);
       store("gone", undefined);
       return { stored: load("a"), missing: load("nope"), gone: load("gone"), preloaded: load("flow.runIds") };`,
      { store: { "flow.runIds": ["r1", "r2"] } },
    );
    expect(value(result)).toEqual({ stored: { list: [1] }, preloaded: ["r1", "r2"] });
    if (!result.ok) return;
    expect(result.storeWrites).toEqual({ set: { a: { list: [1] } }, delete: ["gone"] });
    expect(events).toEqual([
      { type: "store", key: "a", value: { list: [1] } },
      { type: "store", key: "gone", value: 1 },
      { type: "store", key: "gone", value: undefined },
    ]);
  });

  it("refuses values that are not JSON", async () => {
    const { result } = await run(`try { store("k", () => 1); } catch (e) { return e.name; }`);
    expect(value(result)).toBe("TypeError");
  });

  it("refuses keys with a lone surrogate, which the journal could not tell apart; a well-formed pair is a key like any", async () => {
    const { result, events } = await run(
      `const refused = [];
       for (const key of ["\\uD800", "a\\uDBFF", "\\uDC00z"]) {
         try { store(key, 1); } catch (e) { refused.push(e.name + ": " + e.message); }
         try { load(key); } catch (e) { refused.push(e.name); }
       }
       store("\\uD83D\\uDE00", 2);
       return { refused, smile: load("😀") };`,
    );
    const answer = value(result) as { refused: string[]; smile: number };
    expect(answer.smile).toBe(2);
    expect(answer.refused).toHaveLength(6);
    expect(answer.refused[0]).toBe("TypeError: store(key, value): key holds a lone UTF-16 surrogate; use well-formed text");
    expect(events.filter((event) => event.type === "store").map((event) => (event as { key: string }).key)).toEqual(["😀"]);
    // The prelude's check runs on the script's RegExp methods: a script that replaces them is refused all the same.
    const patched = await run(
      `RegExp.prototype.test = () => false; RegExp.prototype.exec = () => null;
       const refused = [];
       for (const key of ["\uD800", "\uD801"]) {
         try { store(key, 1); } catch (e) { refused.push(e.message); }
       }
       return refused;`,
    );
    expect(value(patched.result)).toEqual(["store(key, value): key holds a lone UTF-16 surrogate; use well-formed text", "store(key, value): key holds a lone UTF-16 surrogate; use well-formed text"]);
    expect(patched.events.filter((event) => event.type === "store")).toEqual([]);
  });
});

describe("runWorkflow: determinism", () => {
  const script = "return { now: Date.now(), date: new Date().toISOString(), random: [Math.random(), Math.random()] };";

  it("fixes Date.now() to startedAt and seeds Math.random()", async () => {
    const a = await run(script, { seed: "s1", startedAt: 1_700_000_000_000 });
    const b = await run(script, { seed: "s1", startedAt: 1_700_000_000_000 });
    const c = await run(script, { seed: "s2", startedAt: 1_700_000_000_000 });
    expect(value(a.result)).toEqual(value(b.result));
    expect(value(a.result)).toMatchObject({ now: 1_700_000_000_000, date: "2023-11-14T22:13:20.000Z" });
    expect((value(c.result) as { random: number[] }).random).not.toEqual((value(a.result) as { random: number[] }).random);
    expect(a.result.replay).toEqual({ seed: "s1", startedAt: 1_700_000_000_000 });
  });

  it("reports the seed it chose so a run can be replayed", async () => {
    const first = await run(script);
    const again = await run(script, first.result.replay);
    expect(value(again.result)).toEqual(value(first.result));
  });

  it("still builds explicit dates", async () => {
    const { result } = await run("return [new Date(0).toISOString(), Date.UTC(2020, 0, 1), new Date(5) instanceof Date];");
    expect(value(result)).toEqual(["1970-01-01T00:00:00.000Z", 1577836800000, true]);
  });
});

describe("runWorkflow: host callbacks", () => {
  it("ignores an onEvent hook that throws", async () => {
    const { result } = await run(`console.log("x"); return 1;`, {
      onEvent: () => {
        throw new Error("journal down");
      },
    });
    expect(value(result)).toBe(1);
  });

  it("refuses args that are not JSON without starting a sandbox", async () => {
    const { result } = await run("return args;", { args: { n: 1n } });
    expect(failure(result)).toMatchObject({ kind: "script", code: "args_invalid" });
  });

  it("refuses args or a store value nested past valueDepth as args_invalid, not as the script's stack limit", async () => {
    const nest = (depth: number): unknown => JSON.parse("[".repeat(depth) + "]".repeat(depth));
    const deep = await run("return 1;", { args: { deep: nest(3000) } });
    expect(failure(deep.result)).toEqual({ kind: "script", code: "args_invalid", message: "args nests deeper than 100 levels (valueDepth)" });
    const stored = await run("return 1;", { store: { plan: nest(200) }, limits: { valueDepth: 150 } });
    expect(failure(stored.result)).toEqual({ kind: "script", code: "args_invalid", message: 'store value "plan" nests deeper than 150 levels (valueDepth)' });
    // At the limit they are read as usual.
    const fits = await run("let d = 0; for (let v = args.deep; Array.isArray(v) && v.length > 0; v = v[0]) d++; return d;", { args: { deep: nest(99) } });
    expect(value(fits.result)).toBe(98);
  });
});

describe("runWorkflow: isolation between runs", () => {
  it("runs several workflows at once, each with its own VM and store", async () => {
    const results = await Promise.all(
      [1, 2, 3, 4].map((n) => run(`store("n", ${n});\nconst r = await agent({ prompt: "p${n}" });\nreturn [load("n"), r.runId, typeof globalThis.shared];`)),
    );
    expect(results.map((r) => value(r.result))).toEqual([1, 2, 3, 4].map((n) => [n, `run-p${n}`, "undefined"]));
  });

  it("starts cleanly after runs that were stopped by a limit, an abort or a timeout", async () => {
    await run("while (true) {}", { limits: { timeoutMs: 50 } });
    await run("while (true) {}", { signal: AbortSignal.timeout(30) });
    await run("const a = [];\nwhile (true) a.push({});", { limits: { memoryBytes: 4 * 1024 * 1024 } });
    const { result } = await run("return 'still fine';");
    expect(value(result)).toBe("still fine");
  });
});
