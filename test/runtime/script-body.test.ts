import { describe, expect, it } from "vitest";
import { parseWorkflow } from "../../runtime/index.ts";
import { failure, hostError, run, value } from "./support.ts";

describe("runWorkflow: the script body", () => {
  it("runs as an async function body with top-level await and return", async () => {
    const { result } = await run("const a = await Promise.resolve(20);\nreturn { sum: a + 22 };");
    expect(value(result)).toEqual({ sum: 42 });
  });

  it("resolves to an undefined value when the script returns nothing", async () => {
    const { result } = await run("const x = 1;");
    expect(result.ok).toBe(true);
    expect(value(result)).toBeUndefined();
  });

  it("gives the script a frozen deep copy of args", async () => {
    const args = { target: "src", nested: { list: [1, 2] } };
    const { result } = await run(
      `"use strict";
       const frozen = Object.isFrozen(args) && Object.isFrozen(args.nested) && Object.isFrozen(args.nested.list);
       let threw = false;
       try { args.nested.list.push(3); } catch { threw = true; }
       return { frozen, threw, target: args.target };`,
      { args },
    );
    expect(value(result)).toEqual({ frozen: true, threw: true, target: "src" });
    expect(args.nested.list).toEqual([1, 2]);
  });

  it("captures console and text output in order and streams it as events", async () => {
    const { result, events } = await run(`console.log("a", 1, { b: 2 }, [3], undefined);\ntext("raw");\nconsole.error("e");\nreturn null;`);
    expect(result.output).toBe('a 1 {"b":2} [3] undefined\nrawe\n');
    // The first output leaves at once; the rest of the turn may leave together.
    const texts = events.filter((e) => e.type === "output").map((e) => (e as { text: string }).text);
    expect(texts[0]).toBe('a 1 {"b":2} [3] undefined\n');
    expect(texts.join("")).toBe(result.output);
  });

  it("sends a flood of output in a few messages, whole and in order with the store writes between", async () => {
    const { result, events } = await run(`for (let i = 0; i < 100000; i++) text(i % 10);\nstore("k", 1);\ntext("end");\nreturn null;`, {
      // One long turn: the CPU watchdog times a turn on the host's clock, which a busy machine stretches past the default 10 s.
      limits: { outputChars: 200000, cpuMs: 120_000 },
    });
    const expected = Array.from({ length: 100000 }, (_, i) => i % 10).join("") + "end";
    expect(result.output).toBe(expected);
    const outputs = events.filter((e) => e.type === "output");
    // One message per text() call before: 100001 output events, each a host message and a log entry.
    expect(outputs.length).toBeLessThan(1000);
    const storeAt = events.findIndex((e) => e.type === "store");
    const before = events.slice(0, storeAt).filter((e) => e.type === "output").map((e) => (e as { text: string }).text).join("");
    expect(before).toBe(expected.slice(0, 100000));
  });

  it("sends output written before a hang while the script spins", async () => {
    const stop = new AbortController();
    let seen = "";
    const { result } = await run(`console.log("a");\nconsole.log("b");\nwhile (true) {}`, {
      signal: stop.signal,
      limits: { cpuMs: 5000 },
      onEvent: (event) => {
        if (event.type !== "output") return;
        seen += event.text;
        if (seen.includes("b")) stop.abort();
      },
    });
    // Aborted, not ended at cpuMs: "b" reached the host while the VM was still spinning.
    expect(failure(result).kind).toBe("aborted");
    expect(result.output).toBe("a\nb\n");
  });

  it("keeps output produced before a failure", async () => {
    const { result } = await run(`console.log("before");\nthrow new Error("boom");`);
    expect(failure(result)).toMatchObject({ kind: "script", name: "Error", message: "boom", line: 2, column: expect.any(Number) });
    // The script's own frame has no name: no name of the runtime's wrapper shows in its stack.
    expect(failure(result).stack).toMatch(/^Error: boom\n {4}at <anonymous> \(inline\.js:2:\d+\)$/);
    expect(result.output).toBe("before\n");
  });

  it("maps error positions to the author's source, through nested calls", async () => {
    const source = `export const apiVersion = 1;
export const meta = { name: "t" };
function inner() {
  return null.field;
}
function outer() { return inner(); }
outer();`;
    const { result } = await run(source);
    const error = failure(result);
    expect(error).toMatchObject({ kind: "script", name: "TypeError", line: 4 });
    expect(error.stack).toMatch(/^TypeError: .*\n {4}at inner \(inline\.js:4:\d+\)\n {4}at outer \(inline\.js:6:\d+\)/);
    expect(error.stack).not.toMatch(/prelude/);
  });

  it("keeps the author's columns on a line where a function opens and closes, and the functions' own scoping", async () => {
    // The runtime adds a catch inside each function's braces (frame-guard.ts): what it adds moves no position.
    const { result } = await run("function f() { return null.x; } const g = () => { return f(); }; g();");
    expect(failure(result)).toMatchObject({ kind: "script", name: "TypeError", line: 1, column: 27 });
    expect(failure(result).stack).toMatch(/^TypeError: .*\n {4}at f \(inline\.js:1:27\)\n {4}at g \(inline\.js:1:59\)\n {4}at <anonymous> \(inline\.js:1:67\)$/);
    const staticBlock = await run("class C { static /* } */ { null.x; } }");
    expect(failure(staticBlock.result)).toMatchObject({ name: "TypeError", line: 1, column: 32 });
    // A var beside a function of the same name, a function declared twice, a name of the runtime's own choosing: all as written.
    const scoped = await run(
      "function h() { var a = 1; function a() {} return typeof a; }\nfunction twice() { function t() { return 1; } function t() { return 2; } return t(); }\nconst __flow_frames = 'mine';\nclass C { #__flow_frames = 2; get v() { return this.#__flow_frames; } }\nfunction boom() { throw new Error('x'); }\ntry { boom(); } catch (e) { return [h(), twice(), __flow_frames, new C().v, e.message]; }",
    );
    expect(value(scoped.result)).toEqual(["number", 2, "mine", 2, "x"]);
  });

  it("runs strict at the top level and in every function, so a function's own \"use strict\" that the runtime moves inside its catch changes nothing", async () => {
    // Sloppy-only code: an undeclared assignment, `this` of a plain call, arguments aliasing a parameter, a write to a frozen object.
    const top = await run("leaked = 1;");
    expect(failure(top.result)).toMatchObject({ kind: "script", name: "ReferenceError", line: 1 });
    const inFunctions = await run(
      `function plain() { return this === undefined; }
       function aliased(a) { arguments[0] = 2; return a; }
       const arrow = () => { try { Object.freeze({ a: 1 }).a = 2; return "wrote"; } catch (e) { return e.name; } };
       function directive() { "use strict"; return this === undefined; }
       function leaks() { leaked = 1; }
       let threw;
       try { leaks(); } catch (e) { threw = e.name; }
       return [plain(), aliased(1), arrow(), directive(), threw];`,
    );
    expect(value(inFunctions.result)).toEqual([true, 1, "TypeError", true, "ReferenceError"]);
    // Sloppy-only syntax never reaches the sandbox: the script is parsed as strict code.
    expect(() => parseWorkflow("function f(o) { with (o) { return x; } }", { origin: "inline" })).toThrow(/syntax error/);
    expect(() => parseWorkflow('function f(a = 1) { "use strict"; }', { origin: "inline" })).toThrow(/syntax error/);
  });

  it("keeps this, arguments, new.target, super, hoisting and generators as written inside the functions the runtime adds its catch to", async () => {
    const { result } = await run(
      `function hoisted() { return early(); function early() { return "early"; } }
       function counted() { return arguments.length; }
       function Made() { this.targeted = new.target === Made; }
       class Base { greet() { return "base"; } }
       class Derived extends Base { constructor() { super(); this.made = true; } greet() { return "derived " + super.greet(); } get self() { return this; } }
       function* steps() { try { yield 1; yield 2; } finally { log.push("closed"); } }
       const log = [];
       const d = new Derived();
       const gen = steps();
       const first = gen.next().value;
       gen.return();
       const thrower = steps();
       thrower.next();
       let thrown;
       try { thrower.throw(new Error("in")); } catch (e) { thrown = e.message; }
       return [hoisted(), counted(1, 2, 3), new Made(), d.greet(), d.self === d, d.made, first, log, thrown];`,
    );
    expect(value(result)).toEqual(["early", 3, { targeted: true }, "derived base", true, true, 1, ["closed", "closed"], "in"]);
  });

  it("reports an error thrown inside a helper at the script's call site", async () => {
    const { result } = await run("const x = 1;\nawait parallel('not an array');");
    expect(failure(result)).toMatchObject({ kind: "script", name: "TypeError", line: 2 });
  });

  it("reports a host call's failure at the script's line that made the call", async () => {
    const refuse = async () => {
      throw hostError("refused", { code: "request_invalid" });
    };
    const agentCall = await run("const a = 1;\n\nawait agent({ prompt: 'p' });", { host: { agent: refuse } });
    expect(failure(agentCall.result)).toMatchObject({ kind: "script", name: "FlowError", message: "refused", line: 3 });
    expect(failure(agentCall.result).stack).toMatch(/^FlowError: refused\n {4}at .*\(inline\.js:3:\d+\)/);
    const toolCall = await run("const found = [];\n\nfound.push(await tools.grep({}));", { host: { tools: { grep: refuse } } });
    expect(failure(toolCall.result)).toMatchObject({ kind: "script", name: "FlowError", message: "refused", line: 3 });
    const stored = await run("const a = 1;\nstore('k', 'x'.repeat(200));", { limits: { storeValueChars: 100 } });
    expect(failure(stored.result)).toMatchObject({ kind: "limit", code: "storeValueChars", line: 2 });
  });

  it("fails with a clear error when the return value is not JSON", async () => {
    const { result } = await run("return { n: 10n };");
    expect(failure(result).message).toMatch(/return value must be JSON-serializable/);
  });

  it("fails instead of hanging when the script awaits a promise nothing can settle", async () => {
    const { result } = await run("await new Promise(() => {});\nreturn 1;");
    expect(failure(result).message).toMatch(/can never settle/);
  });
});
