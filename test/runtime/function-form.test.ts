import { describe, expect, it } from "vitest";
import { parseWorkflow, WorkflowScriptError } from "../../runtime/index.ts";
import { run, value } from "./support.ts";

const typed = `export const apiVersion = 1;
export const meta = { name: "double", args: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } };

export default async function double({ args }) {
  const found = await agent({ role: "explorer", prompt: label(args.n) });
  return { twice: args.n * 2, found: found.value };
}

const label = (n) => "count " + n;
`;

function problem(source: string): WorkflowScriptError {
  try {
    parseWorkflow(source, { origin: "inline" });
  } catch (error) {
    expect(error).toBeInstanceOf(WorkflowScriptError);
    return error as WorkflowScriptError;
  }
  throw new Error("expected script_invalid");
}

describe("the function form: export default", () => {
  it("runs the top level first, then the function with { args }; its value is the result", async () => {
    const { result, events } = await run(typed, { args: { n: 21 } });
    expect(value(result)).toEqual({ twice: 42, found: "did count 21" });
    expect(events.filter((event) => event.type === "agent_start")).toHaveLength(1);
  });

  it("accepts an anonymous function and an arrow function", async () => {
    expect(value((await run("export default async function ({ args }) { return args.x + 1; }", { args: { x: 1 } })).result)).toBe(2);
    expect(value((await run("export default ({ args }) => args.x * 3;", { args: { x: 2 } })).result)).toBe(6);
    // Wrapped in parentheses, as a formatter or a habit may write it; a comment between may hold one too.
    expect(value((await run("export default (async ({ args }) => args.x + 4);", { args: { x: 1 } })).result)).toBe(5);
    expect(value((await run("export default /* ( */ ((function () { return 8; }));")).result)).toBe(8);
    expect(problem("export default(() => 9);").message).toMatch(/a space between `export default` and its `\(`/);
  });

  it("keeps lines and columns: a throw in the function points at the author's line", async () => {
    const source = "export const apiVersion = 1;\nexport default async function () {\n  throw new Error('boom');\n}\n";
    const { result } = await run(source);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ message: "boom", line: 3 });
  });

  it("is checked like the script form, and refuses what would make it ambiguous", () => {
    expect(problem("export default async function () {}\nreturn 1;").message).toMatch(/returns from its function, not from the top level/);
    expect(problem("if (true) { return 1; }\nexport default () => 1;").message).toMatch(/not from the top level/);
    expect(problem("const __main__ = 1;\nexport default () => 1;").message).toMatch(/reserved/);
    expect(problem("export default\n  async function () {}").message).toMatch(/on one line/);
    expect(problem("export default { a: 1 };").message).toMatch(/must be the workflow's function/);
    expect(problem("export default () => 1;\nexport default () => 2;").message).toMatch(/syntax error/);
  });

  it("still allows return inside nested functions of the top level", async () => {
    expect(value((await run("const f = () => { return 5; };\nexport default () => f();")).result)).toBe(5);
  });
});
