/**
 * A Pi session not saved to a file (`pi --no-session`, SessionManager.inMemory()): external_runs
 * refuses it (session_unavailable), so nothing may send the model, a script or a person there.
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { childAnswers } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession({ persisted: false });
});
afterEach(() => pi.dispose());

const big = "y".repeat(17_000);

describe("a workflow script", () => {
  test("readFinal() of a tools.external_delegate answer over 16 KiB says it cannot be paged here and what works: agent() returns the whole value", async () => {
    const script = [
      "export const apiVersion = 1;",
      'export const meta = { name: "big", description: "d", tools: ["external_delegate"] };',
      'const delegated = await tools.external_delegate({ role: "worker", description: "d", prompt: "p", context: { mode: "none" } });',
      "let refused;",
      "try { await readFinal(delegated.data.run); } catch (error) { refused = { code: error.code, message: error.message }; }",
      'const child = await agent({ role: "worker", description: "a", prompt: "p", context: { mode: "none" } });',
      "return { delivery: delegated.data.run.output.delivery, refused, whole: child.value.length };",
    ].join("\n");
    const result = await pi.callTool("external_workflow", { script }, { children: [childAnswers(big), childAnswers(big)] });
    const value = (result.structuredContent as { data: { run: { output: { value: { delivery: string; refused: { code: string; message: string }; whole: number } } } } }).data.run.output.value;
    expect(value.delivery).toBe("reference");
    expect(value.refused.code).toBe("session_unavailable");
    expect(value.refused.message).toMatch(/not saved to a file/);
    expect(value.refused.message).toMatch(/agent\(\)/);
    expect(value.whole).toBe(big.length);
  });
});
