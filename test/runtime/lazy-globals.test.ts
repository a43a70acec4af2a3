// The helpers and tool discovery are compiled inside the VM on first use. A script must not be able
// to tell them apart from eagerly defined globals in what they do, nor to hijack their definition.
import { describe, expect, it } from "vitest";
import { failure, run, value } from "./support.ts";

const LAZY = ["parallel", "retry", "readFinal", "handoff", "describeTool", "searchTools"];

describe("lazily compiled globals", () => {
  it("are non-enumerable functions with their own names, plain data properties once read", async () => {
    const { result } = await run(
      `const names = ${JSON.stringify(LAZY)};
       return names.map((name) => {
         const kind = typeof globalThis[name];
         const d = Object.getOwnPropertyDescriptor(globalThis, name);
         return [kind, globalThis[name].name, "value" in d, d.writable, d.enumerable, d.configurable, Object.keys(globalThis).includes(name)];
       });`,
    );
    expect(value(result)).toEqual(LAZY.map((name) => ["function", name, true, true, false, true, false]));
  });

  it("compile the real helpers even after a script replaced eval, Function and Object.defineProperty", async () => {
    const { result } = await run(
      `globalThis.eval = () => () => ({ parallel: () => "forged" });
       globalThis.Function = function () { return () => "forged"; };
       Object.defineProperty = () => { throw new Error("forged defineProperty"); };
       const results = await parallel([() => agent({ prompt: "a" }).then((r) => r.value)]);
       const packet = handoff("evidence");
       return { results, packet: packet.includes('"evidence":"evidence"') };`,
    );
    expect(value(result)).toEqual({ results: ["did a"], packet: true });
  });

  it("let a script assign or redefine a helper before first reading it", async () => {
    const { result } = await run(
      `parallel = () => "mine";
       Object.defineProperty(globalThis, "retry", { value: () => "also mine", writable: false, configurable: true });
       return [parallel(), retry(), typeof readFinal];`,
    );
    expect(value(result)).toEqual(["mine", "also mine", "function"]);
  });

  it("keep the prelude's private bindings: a helper's FlowError is the runtime's, not a script's", async () => {
    const { result } = await run(
      `globalThis.FlowError = class Fake extends Error {};
       try {
         await readFinal({ runId: "r1", output: { finalAvailable: false } });
       } catch (e) {
         return [e.name, e.code, e instanceof globalThis.FlowError];
       }`,
    );
    expect(value(result)).toEqual(["FlowError", "final_unavailable", false]);
  });

  it("report an error thrown inside a lazily compiled helper at the script's line", async () => {
    const { result } = await run("const before = 1;\nawait retry('not a function');");
    const error = failure(result);
    expect(error).toMatchObject({ kind: "script", name: "TypeError", line: 2 });
    expect(error.stack).not.toMatch(/<input>|prelude/);
  });

  it("start each run from the source again: a helper replaced in one run is intact in the next", async () => {
    await run("parallel = () => 'tampered'; retry.hijacked = true; return parallel();");
    const { result } = await run("return [typeof parallel([]).then, 'hijacked' in retry];");
    expect(value(result)).toEqual(["function", false]);
  });
});
