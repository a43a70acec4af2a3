import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, onTestFinished, test } from "vitest";
import { childAnswers } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";

let pi: PiTestSession | undefined;
afterEach(() => pi?.dispose());

const reviewer = { role: "reviewer", description: "Judge the parser", prompt: "Is src/parser.ts correct?", context: { mode: "none" } };

test('harness "replay" with no cassette configured is harness_unavailable, and says how to configure one', async () => {
  pi = await startPiSession();
  const { receipt } = await callForReceipt(pi, "external_delegate", { ...reviewer, harness: "replay" });
  expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "harness_unavailable" } });
  expect(receipt.error!.message).toContain("PI_FLOW_REPLAY=<file.jsonl>");
  expect(receipt.error!.message).toContain('"flow": { "replay": { "cassette"');
});

test("PI_FLOW_RECORD records a child inside Pi; PI_FLOW_REPLAY then answers harness \"replay\" from it with no model", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pi-flow-cassette-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const cassette = join(dir, "reviews.jsonl");

  pi = await startPiSession({ env: { PI_FLOW_RECORD: cassette } });
  const recorded = await callForReceipt(pi, "external_delegate", reviewer, { children: [childAnswers("Approve: the parser handles every case.")] });
  expect(recorded.receipt.ok).toBe(true);
  const lines = readFileSync(cassette, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines).toHaveLength(2);
  expect(lines[1]).toMatchObject({ key: { agent: "role:reviewer", description: "Judge the parser", occurrence: 1 }, outcome: "succeeded", answer: "Approve: the parser handles every case." });
  await pi.dispose();

  // A new session whose children could not answer: nothing is scripted for them.
  pi = await startPiSession({ env: { PI_FLOW_REPLAY: cassette } });
  const replayed = await callForReceipt(pi, "external_delegate", { ...reviewer, harness: "replay" });
  expect(replayed.receipt.ok).toBe(true);
  expect(replayed.run).toMatchObject({ task: { harness: "replay" }, output: { delivery: "inline", value: "Approve: the parser handles every case." } });

  // The second such child outside a workflow is occurrence 2, with another prompt: no answer; the
  // message names its key and the nearest recorded one.
  const other = await callForReceipt(pi, "external_delegate", { ...reviewer, prompt: "Is src/lexer.ts correct?", harness: "replay" });
  expect(other.receipt).toMatchObject({ ok: false, error: { code: "failed" } });
  expect(other.receipt.error!.message).toMatch(/no answer for role:reviewer "Judge the parser" #2 sha256:[0-9a-f]{16} \(strict replay\)\. Nearest recorded: role:reviewer "Judge the parser" #1 sha256:/);
});

test("a secret in a child's description never reaches the cassette, and the redacted key still replays", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pi-flow-cassette-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const cassette = join(dir, "secret.jsonl");
  const token = `ghp_${"A1b2C3d4".repeat(5)}`;
  const secretive = { ...reviewer, description: `Check ${token}` };

  pi = await startPiSession({ env: { PI_FLOW_RECORD: cassette } });
  expect((await callForReceipt(pi, "external_delegate", secretive, { children: [childAnswers("Approve.")] })).receipt.ok).toBe(true);
  const text = readFileSync(cassette, "utf8");
  expect(text).not.toContain(token);
  expect(text).toContain("Check [REDACTED]");
  await pi.dispose();

  pi = await startPiSession({ env: { PI_FLOW_REPLAY: cassette } });
  const replayed = await callForReceipt(pi, "external_delegate", { ...secretive, harness: "replay" });
  expect(replayed.run).toMatchObject({ output: { value: "Approve." } });
});
