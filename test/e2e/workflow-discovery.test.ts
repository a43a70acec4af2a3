import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callForReceipt } from "../support/receipts.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

/**
 * describeTool() and searchTools() in a workflow run by a real Pi session: the declarations of the
 * tools this workflow may call, rendered from the schemas the session registered.
 */
let pi: PiTestSession;
beforeAll(async () => {
  pi = await startPiSession();
});
afterAll(() => pi.dispose());

async function runScript(script: string): Promise<unknown> {
  const { receipt, run } = await callForReceipt(pi, "external_workflow", { script });
  expect(receipt.error).toBeUndefined();
  return run?.output.value;
}

describe("describeTool and searchTools inside a workflow", () => {
  test("describeTool gives a callable tool's description and declaration, from its registered schemas", async () => {
    // Declarations are long: the script returns the lines that matter, so the value stays inline.
    const value = (await runScript(`
      export const meta = { tools: ["read"] };
      const lines = (text, pattern) => text === undefined ? undefined : text.split("\\n").filter((line) => pattern.test(line));
      const runs = await describeTool("external_runs");
      return {
        head: runs.split("\\n")[0],
        runs: lines(runs, /external_runs\\(args|^interface ExternalRunsInput|^  action: "list"|workflow tool declaration/),
        read: lines(await describeTool("read"), /read\\(args/),
        bash: await describeTool("bash"),
        none: await describeTool("nope"),
      };
    `)) as Record<string, unknown>;
    expect(value.head).toMatch(/^Supervise this session.s runs/);
    expect(value.runs).toEqual([
      "workflow tool declaration:",
      "interface ExternalRunsInput {",
      '  action: "list" | "inspect" | "wait" | "cancel" | "steer" | "apply" | "discard";',
      "  external_runs(args: ExternalRunsInput): Promise<ExternalRunsOutput>;",
    ]);
    expect(value.read).toEqual(["  read(args: ReadInput): Promise<ReadOutput>;"]);
    // Not in meta.tools, so not callable here: no declaration, exactly as for an unknown name.
    expect(value).not.toHaveProperty("bash");
    expect(value).not.toHaveProperty("none");
  });

  test("searchTools ranks the callable tools for a query and returns each one's declaration", async () => {
    const value = (await runScript(`
      export const meta = { tools: ["read", "bash"] };
      const found = await searchTools("cancel a run");
      const one = await searchTools("file", { limit: 1 });
      let refused;
      try { await searchTools("x", { limit: 0 }); } catch (error) { refused = error.name + ": " + error.message; }
      return { names: found.map((match) => match.name), first: found[0].description.includes("external_runs(args: ExternalRunsInput)"), one: one.map((match) => match.name), refused };
    `)) as { names: string[]; first: boolean; one: string[]; refused: string };
    expect(value.names[0]).toBe("external_runs");
    expect(value.names).not.toContain("edit");
    expect(value.first).toBe(true);
    expect(value.one).toEqual(["read"]);
    expect(value.refused).toBe("TypeError: searchTools(query, { limit }): limit must be a positive integer");
  });
});
