// Attempts to reach past the sandbox. Each must fail inside the VM, or end the run with a named limit.
import { describe, expect, it } from "vitest";
import type { AgentOptions } from "../../runtime/index.ts";
import { failure, run, value } from "./support.ts";

describe("sandbox escapes", () => {
  it("has no host globals, timers, I/O or WebAssembly", async () => {
    const names = [
      "process", "require", "module", "Buffer", "fetch", "setTimeout", "setInterval", "setImmediate", "queueMicrotask",
      "WebAssembly", "XMLHttpRequest", "Worker", "SharedArrayBuffer", "WeakRef", "FinalizationRegistry", "__flow_host",
      "__flow_start", "std", "os",
    ];
    const { result } = await run(`return ${JSON.stringify(names)}.filter((name) => typeof globalThis[name] !== "undefined");`);
    expect(value(result)).toEqual([]);
  });

  it("sees no pi-flow internal in its own scope, and cannot replace the one its wrapper calls", async () => {
    const { result } = await run(
      `const seen = [typeof __flow_uncaught, typeof __flow_start, typeof __flow_error, eval("typeof __flow_uncaught"), typeof arguments[0]];
       return seen;`,
    );
    expect(value(result)).toEqual(["undefined", "undefined", "undefined", "undefined", "undefined"]);
    // A var of the wrapper's names, or its own uncaught() hand-off, changes nothing the runtime does with a thrown error.
    const replaced = await run("var __flow_uncaught = () => ({ message: 'replaced' });\nvar __flow_error;\nthrow new Error('own');");
    expect(failure(replaced.result)).toMatchObject({ kind: "script", message: "own" });
    // Reached through eval of a built name, the wrapper's class cannot be changed either.
    const rewired = await run(
      "const wrapper = eval('__flow_' + 'frames');\nconst tries = [() => Object.setPrototypeOf(wrapper, { uncaught: () => new Error('forged') }), () => { wrapper.extra = 1; }];\nconst refused = tries.map((attempt) => { try { attempt(); return 'changed'; } catch (e) { return e.name; } });\nfunction own() { throw new Error(refused.join()); }\nown();",
    );
    expect(failure(rewired.result)).toMatchObject({ kind: "script", message: "TypeError,TypeError" });
  });

  it("cannot import modules at run time", async () => {
    const { result } = await run(
      `const attempts = [];
       for (const code of ["import('node:fs')", "import('./other.js')"]) {
         try { await (0, eval)(code); attempts.push("imported"); } catch (e) { attempts.push(e.name); }
       }
       return attempts;`,
    );
    expect(value(result)).not.toContain("imported");
  });

  it("reaches only the sandbox global through the Function constructor", async () => {
    const { result } = await run(
      `const viaFunction = Function("return this")();
       const viaChain = (() => {}).constructor.constructor("return typeof process")();
       const viaAsync = await (async () => {}).constructor("return typeof require")();
       return { same: viaFunction === globalThis, process: typeof viaFunction.process, viaChain, viaAsync };`,
    );
    expect(value(result)).toEqual({ same: true, process: "undefined", viaChain: "undefined", viaAsync: "undefined" });
  });

  it("hands the host no prototype pollution through returned values or agent options", async () => {
    let seen: AgentOptions | undefined;
    const { result } = await run(
      `const evil = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}');
       await agent({ prompt: "p", nested: evil });
       return evil;`,
      { host: { agent: async (options) => ((seen = options), { runId: "r", output: "", value: "" }) } },
    );
    const returned = value(result) as Record<string, unknown>;
    expect(Object.hasOwn(returned, "__proto__")).toBe(false);
    expect(Object.getPrototypeOf(returned)).toBe(Object.prototype);
    const merged = Object.assign({}, returned, seen?.nested);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((merged as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(seen?.nested as object, "__proto__")).toBe(false);
  });

  it("cannot reach host objects through values the host sends in", async () => {
    const { result } = await run(
      `const r = await agent({ prompt: "p" });
       return { isPlain: Object.getPrototypeOf(r) === Object.prototype, ctor: r.constructor === Object, keys: Object.keys(r) };`,
      { host: { agent: async () => ({ runId: "r", output: "o", value: "v", extra: () => 1 } as never) } },
    );
    expect(value(result)).toEqual({ isPlain: true, ctor: true, keys: ["runId", "output", "value"] });
  });

  it("contains huge strings: QuickJS's length cap, then the memory limit when one is materialized", async () => {
    const grow = "let s = 'x';\nfor (let i = 0; i < 27; i++) s = s + s;\n";
    const capped = await run("let s = 'x';\nwhile (true) s = s + s;", { limits: { memoryBytes: 16 * 1024 * 1024 } });
    expect(failure(capped.result)).toMatchObject({ kind: "script", name: "InternalError", message: "string too long", line: 2 });
    for (const use of ["return s.indexOf('y');", "text(s);", "store('k', s);", "return s;", "await agent({ prompt: s });"]) {
      const { result } = await run(grow + use, { limits: { memoryBytes: 16 * 1024 * 1024 } });
      const { line, column, ...error } = failure(result);
      expect(error).toEqual({ kind: "limit", code: "memoryBytes", message: "memory limit (16777216) reached" });
      // text() hands the string to the host, which cannot be given it: the failure names that call.
      expect([line, column]).toEqual(use === "text(s);" ? [3, 5] : [undefined, undefined]);
    }
  });

  it("contains a huge string sent as output", async () => {
    const { result } = await run("console.log('y'.repeat(1_000_000));", { limits: { outputChars: 1000 } });
    expect(failure(result).code).toBe("outputChars");
    expect(result.output).toHaveLength(1000);
  });

  it("contains deep recursion, including through async functions, getters and deep JSON", async () => {
    const stackLimit = { kind: "limit", code: "stackBytes", message: "stack limit (131072) reached" };
    for (const script of [
      "async function down() { return await down(); }\nawait down();",
      "const o = { get x() { return this.x; } };\nreturn o.x;",
      "let o = {};\nfor (let i = 0; i < 100000; i++) o = { o };\nreturn JSON.stringify(o);",
      "return JSON.parse('['.repeat(100000));",
    ]) {
      const { result } = await run(script, { limits: { stackBytes: 128 * 1024 } });
      expect(failure(result)).toEqual(stackLimit);
    }
    // Caught, it is QuickJS's own InternalError, which a script can recover from.
    const caught = await run("async function down() { return await down(); }\ntry { await down(); } catch (e) { return [e.name, e.message]; }", {
      limits: { stackBytes: 128 * 1024 },
    });
    expect(value(caught.result)).toEqual(["InternalError", "stack overflow"]);
    // A cycle is not recursion: JSON.stringify detects it and throws a plain TypeError.
    const cyclic = await run("const a = []; a.push(a);\nreturn JSON.stringify(a);", { limits: { stackBytes: 128 * 1024 } });
    expect(failure(cyclic.result)).toMatchObject({ kind: "script", name: "TypeError", message: "circular reference", line: 2 });
  });

  it("does not let a script fake a limit: only limits the runtime enforced end a run as kind limit", async () => {
    for (const script of [
      `throw Object.assign(new Error("x"), { code: "agentCalls" });`,
      `throw Object.assign(new RangeError("x"), { code: "storeWrites", limit: "storeWrites" });`,
      // Patching the built-ins the runtime uses to recognise its own errors changes nothing.
      `WeakMap.prototype.get = () => "agentCalls"; WeakMap.prototype.has = () => true;\nthrow Object.assign(new Error("x"), { code: "agentCalls" });`,
      // A runtime limit error whose code the script rewrites is still reported as the limit it was.
      `try { store("k", "x".repeat(100)); } catch (e) { e.code = "agentCalls"; throw Object.assign(new Error("x"), { code: "agentCalls" }); }`,
    ]) {
      const { result } = await run(script, { limits: { storeValueChars: 50 } });
      expect(failure(result)).toMatchObject({ kind: "script", name: expect.stringMatching(/Error$/), code: expect.any(String), message: "x" });
    }
    // A host rejection whose code happens to be a limit's name is the host's error, not a limit.
    const host = await run(`await tools.t({});`, { host: { tools: { t: async () => Promise.reject(Object.assign(new Error("busy"), { code: "toolCalls" })) } } });
    expect(failure(host.result)).toMatchObject({ kind: "script", name: "FlowError", code: "toolCalls", message: "busy" });
    // Nor does a `limit` (or `code`, `name`) the script puts on Object.prototype, under every host refusal.
    const inherited = await run(`Object.assign(Object.prototype, { limit: "agentCalls", code: "agentCalls", name: "RangeError" });\nawait tools.t({});`, {
      host: { tools: { t: async () => Promise.reject(new Error("busy")) } },
    });
    expect(failure(inherited.result)).toMatchObject({ kind: "script", name: "FlowError", code: "host_error", message: "busy" });
    // Nor a toJSON on Object.prototype, which would rewrite the failure as the runtime serialises it for the host.
    const forged = `Object.prototype.toJSON = function () { return { name: "RangeError", message: "forged", code: "agentCalls", limit: "agentCalls" }; };`;
    for (const thrown of [`new Error("x")`, `"x"`]) {
      const { result } = await run(`${forged}\nthrow ${thrown};`);
      expect(failure(result)).toMatchObject({ kind: "script", name: "Error", message: thrown === `"x"` ? "uncaught x" : "x" });
    }
    // The genuine error, rethrown, is still the limit (with its real name even if the script edits `code`).
    const rethrown = await run(`try { store("k", "x".repeat(100)); } catch (e) { e.code = "agentCalls"; throw e; }`, { limits: { storeValueChars: 50 } });
    expect(failure(rethrown.result)).toMatchObject({ kind: "limit", code: "storeValueChars" });
  });

  it("contains a flood of promises: the memory limit ends it", async () => {
    const { result } = await run("const all = [];\nwhile (true) all.push(new Promise(() => {}));", {
      // The CPU limit is at its ceiling so that on a busy machine only memory can end the flood.
      limits: { memoryBytes: 8 * 1024 * 1024, cpuMs: 60 * 60_000 },
    });
    expect(failure(result)).toMatchObject({ kind: "limit", code: "memoryBytes" });
  });

  it("contains an endless microtask chain: the wall time limit ends it", async () => {
    const { result } = await run("const loop = () => Promise.resolve().then(loop);\nloop();\nawait new Promise(() => {});", {
      limits: { timeoutMs: 300 },
    });
    expect(failure(result)).toMatchObject({ kind: "timeout", code: "timeoutMs" });
  });

  it("counts against cpuMs the script's code that runs while the worker reads a value the prelude did not catch", async () => {
    // A promise whose species resolves through functions that throw: the job that settles it throws, and
    // the worker reads what it threw as it is.
    const hostile = ["{ toJSON() { for (;;) {} } }", "new Proxy({}, { get() { for (;;) {} } })"];
    for (const thrown of hostile) {
      const species = `function Evil(executor) { executor(() => { throw ${thrown}; }, () => { throw ${thrown}; }); }\nEvil[Symbol.species] = Evil;`;
      const { result } = await run(`${species}\nconst p = Promise.resolve(1); p.constructor = Evil; p.then(() => 1);\nawait agent({ prompt: "x" });\nreturn 1;`, {
        limits: { cpuMs: 200, timeoutMs: 60_000 },
      });
      expect(failure(result)).toMatchObject({ kind: "limit", code: "cpuMs" });
    }
  });

  it("contains a flood of agent() calls: queued by concurrency, cut by the call limit", async () => {
    let started = 0;
    const { result } = await run("await Promise.all(Array.from({ length: 10000 }, (_, i) => agent({ prompt: String(i) })));", {
      limits: { agentCalls: 20, concurrency: 2 },
      host: { agent: async (options) => (started++, { runId: options.prompt, output: "", value: "" }) },
    });
    expect(failure(result)).toMatchObject({ kind: "limit", code: "agentCalls" });
    expect(started).toBeLessThanOrEqual(20);
  });

  it("runs each script in a fresh VM: globals do not leak between runs", async () => {
    await run("globalThis.leak = 42; Object.prototype.polluted = true; return 1;");
    const { result } = await run("return [typeof globalThis.leak, 'polluted' in {}];");
    expect(value(result)).toEqual(["undefined", false]);
  });

  it("prints any value a script hands console.log() or text(), and agent() answers a revoked proxy with a rejected promise", async () => {
    const { result } = await run(
      `const { proxy, revoke } = Proxy.revocable({}, {});
       revoke();
       const throwing = { [Symbol.toPrimitive]() { throw new Error("primitive"); }, toJSON() { throw new Error("json"); } };
       const named = Object.create(Error.prototype, { name: { get() { throw new Error("name"); } } });
       console.log(proxy, throwing, named);
       text(proxy);
       const call = agent(proxy);
       let refused;
       try { await call; } catch (error) { refused = error.message; }
       return [call instanceof Promise, refused];`,
    );
    expect(value(result)).toEqual([true, "revoked proxy"]);
    const placeholder = "[a value that cannot be printed]";
    expect(result.output).toBe(`${placeholder} ${placeholder} ${placeholder}\n${placeholder}`);
  });

  it("reports a thrown value's fields as first read, whatever its getters answer after", async () => {
    const answers = ["throw new Error('second')", "return { nested: [1, 2, 3] }"];
    for (const second of answers) {
      const { result } = await run(`let reads = 0;\nthrow { name: "Mine", get message() { if (reads++) { ${second}; } return "first"; } };`);
      expect(failure(result)).toMatchObject({ kind: "script", name: "Mine", message: "first" });
    }
  });

  it("keeps a script's changes to built-ins away from the runtime's own plumbing", async () => {
    const { result } = await run(
      `JSON.stringify = () => "hijacked"; JSON.parse = () => ({ hijacked: true });
       const r = await agent({ prompt: "p" });
       store("k", { ok: 1 });
       return { runId: r.runId, stored: load("k") };`,
    );
    expect(value(result)).toEqual({ runId: "run-p", stored: { ok: 1 } });
  });
});

describe("a script that replaces built-ins the prelude uses", () => {
  // Each script tampers first, in its synchronous start, then calls the host and returns.
  const tampered: Record<string, string> = {
    "Map.prototype.get/set/delete": `Map.prototype.get = () => undefined; Map.prototype.set = () => { throw new Error("set"); }; Map.prototype.delete = () => false;`,
    "Promise.prototype.then": `Promise.prototype.then = function () { return this; };`,
    "Promise.prototype.constructor": `Object.defineProperty(Promise.prototype, "constructor", { get() { throw new Error("constructor"); } });`,
    "Promise[Symbol.species]": `Object.defineProperty(Promise, Symbol.species, { get() { throw new Error("species"); } });`,
    "the Promise global": `globalThis.Promise = function () {};`,
    "Array.prototype.map/join/push": `Array.prototype.map = Array.prototype.join = Array.prototype.push = () => { throw new Error("array"); };`,
    "the error constructors": `globalThis.TypeError = globalThis.RangeError = function () { return { fake: true }; };`,
    "a setter for code on Object.prototype": `Object.defineProperty(Object.prototype, "code", { set() {}, configurable: true });`,
  };
  for (const [what, tamper] of Object.entries(tampered)) {
    it(`still gets its calls' answers, refusals and return value after replacing ${what}`, async () => {
      expect(value((await run(`${tamper}\nreturn 7;`)).result)).toBe(7);
      // The script's own await reads Promise.prototype.constructor, as the language says it does.
      if (what === "Promise.prototype.constructor") return;
      const { result } = await run(
        `${tamper}
         const a = await agent({ prompt: "a" });
         const b = await agent({ prompt: "b" });
         let refused;
         try { await agent(5); } catch (error) { refused = Object.hasOwn(error, "message") && error.message; }
         let code;
         try { store("k", "x".repeat(300000)); } catch (error) { code = Object.getOwnPropertyDescriptor(error, "code")?.value; }
         console.log("printed", 1);
         return [a.runId, b.runId, refused, code];`,
      );
      expect(value(result)).toEqual(["run-a", "run-b", "agent(options): options must be an object", "storeValueChars"]);
      expect(result.output).toBe("printed 1\n");
    });
  }
});
