// Pi loads the extension afresh on each reload, so the CLI process module can exist twice in one
// process. The host's exit must still kill every CLI child's group, through one exit hook, not one
// more listener for each copy that started a child.
import { expect, test } from "vitest";
import * as first from "../../src/harnesses/cli/process.ts";

const quick = { command: "sh", args: ["-c", "exit 0"], cwd: process.cwd(), env: process.env, stdin: "", killGraceMs: 1000, maxLineBytes: 1024, maxStderrBytes: 1024, onLine: () => undefined };

test("two copies of the CLI process module, as a reload loads them, share one exit hook", async () => {
  const copy = new URL("../../src/harnesses/cli/process.ts?reloaded", import.meta.url).href;
  const second = (await import(copy)) as typeof first;
  expect(second).not.toBe(first);
  await first.startCliProcess(quick).exited;
  const hooks = process.listenerCount("exit");
  expect((await second.startCliProcess(quick).exited).code).toBe(0);
  expect(process.listenerCount("exit")).toBe(hooks);
});
