import { existsSync } from "node:fs";
import { afterEach, beforeEach, expect, test } from "vitest";
import { callForReceipt } from "../support/receipts.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
});
afterEach(() => pi.dispose());

test("external_workflow refuses args or a script over 1 MiB with request_invalid, and launches nothing", async () => {
  const big = "x".repeat(1024 * 1024);
  const tooMuchArgs = await callForReceipt(pi, "external_workflow", { script: "return args.text.length;", args: { text: big } });
  expect(tooMuchArgs.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
  expect(tooMuchArgs.receipt.error?.message).toMatch(/^args is 1048587 bytes of JSON, over 1 MiB \(1048576 bytes\), the most a workflow's args may hold\.$/);
  const tooLongScript = await callForReceipt(pi, "external_workflow", { script: `// ${big}\nreturn 1;` });
  expect(tooLongScript.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
  expect(tooLongScript.receipt.error?.message).toMatch(/^script is over 1 MiB/);
  expect(existsSync(pi.flowHome)).toBe(false);
  // Just under the limit runs as usual.
  const fits = await callForReceipt(pi, "external_workflow", { script: "return args.text.length;", args: { text: "x".repeat(1024 * 1024 - 20) } });
  expect(fits.receipt).toMatchObject({ ok: true, data: { run: { output: { value: 1024 * 1024 - 20 } } } });
});

test("external_workflow refuses args nested past the workflow's valueDepth with request_invalid, and launches nothing", async () => {
  const nest = (depth: number): unknown => JSON.parse("[".repeat(depth) + "]".repeat(depth));
  // 500 levels: past the default valueDepth, within the 1,000 past which pi-flow replaces an argument before Pi copies it (MAX_ARGUMENT_DEPTH).
  const deep = await callForReceipt(pi, "external_workflow", { script: "return 1;", args: { deep: nest(500) } });
  expect(deep.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid", message: "args nest deeper than 100 levels (the workflow's valueDepth limit); pass flatter args." } });
  expect(existsSync(pi.flowHome)).toBe(false);
  // A workflow that raises its valueDepth takes deeper args.
  const raised = await callForReceipt(pi, "external_workflow", { script: "export const meta = { limits: { valueDepth: 200 } };\nreturn 1;", args: { deep: nest(150) } });
  expect(raised.receipt).toMatchObject({ ok: true, data: { run: { output: { value: 1 } } } });
});
