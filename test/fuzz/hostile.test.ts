// Every hostile script of the fuzz corpus, once, through a real Pi session: each ends its own run
// with a contract receipt (a value, or a failure with a typed code), and the session goes on.
import { afterAll, beforeAll, expect, test } from "vitest";
import { callForReceipt } from "../support/receipts.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { HOSTILE_SCRIPTS } from "./inputs.ts";

let pi: PiTestSession;
beforeAll(async () => {
  pi = await startPiSession();
});
afterAll(() => pi.dispose());

test.each(HOSTILE_SCRIPTS.map((script) => [script.source.replace(/\s+/g, " ").slice(0, 90), script.source]))("%s", async (_label, script) => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => void rejections.push(reason);
  process.on("unhandledRejection", onRejection);
  try {
    const { receipt, result } = await callForReceipt(pi, "external_workflow", { script });
    if (!receipt.ok) expect(receipt.error!.code).toBe("failed");
    expect(result.text.length).toBeLessThan(40_000);
  } finally {
    process.off("unhandledRejection", onRejection);
  }
  expect(rejections).toEqual([]);
  const after = await callForReceipt(pi, "external_workflow", { script: "return 'alive';" });
  expect(after.receipt.data.run?.output).toMatchObject({ value: "alive" });
});
