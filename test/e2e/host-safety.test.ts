// A hostile or careless script, or bad input, fails its own run with a typed error; the user's Pi
// session, and every other run in it, goes on.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { callForReceipt } from "../support/receipts.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
});
afterEach(() => pi.dispose());

const workflow = (args: Record<string, unknown>) => callForReceipt(pi, "external_workflow", args);

/** Every file of one run's evidence folder, with its size. */
function evidenceOf(runId: string): Map<string, number> {
  const find = (dir: string): string | undefined => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      if (entry.name === runId) return join(dir, entry.name);
      const inner = find(join(dir, entry.name));
      if (inner) return inner;
    }
    return undefined;
  };
  const dir = find(pi.flowHome);
  if (!dir) throw new Error(`no evidence for ${runId}`);
  return new Map(readdirSync(dir).map((name) => [name, statSync(join(dir, name)).size]));
}

async function expectSessionWorks(): Promise<void> {
  const { receipt } = await workflow({ script: "return 'still working';" });
  expect(receipt).toMatchObject({ ok: true, data: { run: { output: { value: "still working" } } } });
}

describe("deep values", () => {
  test.each([5_000, 100_000])("a returned value nested %i levels fails its run with a limit error, and the session keeps working", async (levels) => {
    const { receipt } = await workflow({ script: `let v = 1; for (let i = 0; i < ${levels}; i++) v = [v]; return v;` });
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed" }, data: { run: { state: { outcome: "failed" } } } });
    expect(receipt.error!.message).toMatch(/^value depth limit \(100\) reached: .* \(limit valueDepth\)$/);
    await expectSessionWorks();
  });

  test("deep store() values, agent() options and tools.* arguments are refused with catchable errors", async () => {
    const { receipt } = await workflow({
      script: `let v = 1; for (let i = 0; i < 5000; i++) v = { a: v };
        const codes = [];
        for (const attempt of [() => store("k", v), () => agent({ role: "explorer", prompt: "p", outputSchema: v }), () => tools.external_help(v)]) {
          try { await attempt(); codes.push("accepted"); } catch (e) { codes.push(e.code); }
        }
        return codes;`,
    });
    expect(receipt).toMatchObject({ ok: true, data: { run: { output: { value: ["valueDepth", "valueDepth", "valueDepth"] } } } });
  });
});

describe("text a script controls", () => {
  test("a 5 MB error message and code reach the model, the record, the journal and diagnostics cut to a few KiB", async () => {
    const { receipt, result } = await workflow({ script: `const e = new Error("E".repeat(5000000)); e.code = "C".repeat(5000000); throw e;` });
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed" } });
    expect(receipt.error!.message).toMatch(/more characters cut/);
    expect(result.text.length).toBeLessThan(20_000);
    const files = evidenceOf(receipt.data.run!.runId);
    expect([...files.keys()]).toEqual(expect.arrayContaining(["record.json", "journal.jsonl", "diagnostics.log"]));
    for (const [name, size] of files) expect(size, name).toBeLessThan(100_000);
  });
});

describe("bad input gets a typed error", () => {
  test("a cwd with a NUL byte is request_invalid, and the message names no host path", async () => {
    const { receipt } = await callForReceipt(pi, "external_delegate", { role: "worker", description: "d", prompt: "p", cwd: "a\u0000b" });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
    expect(receipt.error!.message).toBe("cwd contains a control character (NUL, newline, tab, ...).");
    expect(receipt.error!.message).not.toContain(pi.cwd);
  });

  test.each([
    ["a cwd that is not a directory", { cwd: "no/such/dir" }, 'cwd "no/such/dir" is not a directory.'],
    ["a cwd longer than any path", { cwd: "x".repeat(5000) }, "cwd is longer than 4096 characters."],
    ["a path component longer than the filesystem allows", { cwd: "y".repeat(300) }, `cwd "${"y".repeat(300)}" is not a directory.`],
    ["a role with a newline", { role: "work\ner" }, "role contains a control character (NUL, newline, tab, ...)."],
    ["a model name of 10,000 characters", { model: "m".repeat(10_000) }, "model is longer than 200 characters."],
  ])("%s is request_invalid", async (_name, override, message) => {
    const { receipt } = await callForReceipt(pi, "external_delegate", { role: "worker", description: "d", prompt: "p", ...override });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid", message } });
  });

  test("agent() options get the same checks: an over-long description fails that call with request_invalid", async () => {
    const { receipt } = await workflow({
      script: `try { await agent({ role: "explorer", prompt: "p", description: "d".repeat(1000) }); } catch (e) { return [e.code, e.message]; }`,
    });
    expect(receipt.data.run!.output).toMatchObject({ value: ["request_invalid", `agent() call 1 ("${"d".repeat(60)}…") option description: expected at most 200 characters.`] });
  });
});
