import { readFileSync, statSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { childAnswers, childAnswersWhenReleased, type Seen } from "../support/children.ts";
import { runFileOf } from "../support/journals.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";
import { STEER_LIMITS } from "../../src/orchestrator/child/steer-budget.ts";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import { schemaViolation } from "../support/schema.ts";

/**
 * A flood of steers at one running child, sent by a codemode script in a real Pi session: the run
 * takes what its steering budget allows and answers the rest `refused` with the reason, its evidence
 * stays small, and the child reads every accepted steer in one model request.
 * PI_FLOW_STEER_FLOOD=10000 floods with the size of the reported finding.
 */

const FLOOD = Number(process.env.PI_FLOW_STEER_FLOOD ?? 1000);
/** Room for a loaded machine: this bounds a hang, it is not a speed target. */
const TIMEOUT_MS = Math.max(60_000, FLOOD * 30);
const MESSAGE_CHARS = 32_000;

let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
});
afterEach(() => pi.dispose());

const worker = { role: "worker", description: "Write notes", prompt: "Write the notes.", context: { mode: "none" } };

describe("a steer flood", () => {
  test(`${FLOOD} steers of 32 KB at one child: the budget takes ${STEER_LIMITS.unreadCount}, refuses the rest, and the child reads them in one request`, async () => {
    const first = childAnswersWhenReleased("first draft");
    const seen: Seen[] = [];
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...worker, background: true }, { children: [first.step, childAnswers("notes with every steer", seen)] });
    const runId = receipt.data.run!.runId;
    await first.started;

    const flood = await pi.runCodemode(`
      const pad = "x".repeat(${MESSAGE_CHARS});
      const accepted = [];
      const refused = {};
      let reason = "";
      for (let i = 0; i < ${FLOOD}; i++) {
        const answer = await tools.external_runs({ action: "steer", runIds: [${JSON.stringify(runId)}], message: "steer " + i + " " + pad });
        const status = answer.ok ? answer.data.status : answer.error.code;
        if (status === "queued") accepted.push(i);
        else { refused[status] = (refused[status] ?? 0) + 1; reason = answer.data?.reason ?? answer.error?.message ?? ""; }
      }
      return { accepted, refused, reason };
    `);
    const { accepted, refused, reason } = flood.value as { accepted: number[]; refused: Record<string, number>; reason: string };
    expect(accepted).toEqual(Array.from({ length: STEER_LIMITS.unreadCount }, (_, index) => index));
    expect(refused).toEqual({ refused: FLOOD - STEER_LIMITS.unreadCount });
    expect(reason).toContain(`at most ${STEER_LIMITS.unreadCount} may wait`);

    // Called directly, a refused steer is an answer in the declared shape, saying why in both channels.
    const direct = await pi.callTool("external_runs", { action: "steer", runIds: [runId], message: "one more" });
    expect(schemaViolation(TOOL_SCHEMAS.external_runs.output, direct.structuredContent)).toBeNull();
    expect(direct.structuredContent).toMatchObject({ ok: true, data: { runId, status: "refused", held: false, reason: expect.stringContaining("at most 8 may wait") } });
    expect(direct.text).toMatch(/^Steer refused, not delivered: Run .* already has 8 steers its child has not read/);

    first.release();
    const waited = await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
    expect(waited.structuredContent).toMatchObject({ ok: true, data: { completed: [{ runId, state: { outcome: "succeeded" }, output: { value: "notes with every steer" } }] } });

    // One more model request read every accepted steer, in order: not one request per steer.
    expect(seen).toHaveLength(1);
    const positions = accepted.map((index) => seen[0]!.user.indexOf(`steer ${index} x`));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    const transcript = readFileSync(runFileOf(pi.flowHome, runId, "session.jsonl"), "utf8");
    const requests = transcript.split("\n").filter((line) => line.includes('"role":"assistant"'));
    expect(requests).toHaveLength(2);

    // The run's evidence holds the accepted steers and one note of the refusals, not the flood.
    const bound = (STEER_LIMITS.unreadCount + 2) * MESSAGE_CHARS;
    for (const file of ["journal.jsonl", "diagnostics.log", "session.jsonl"]) {
      expect(statSync(runFileOf(pi.flowHome, runId, file)).size).toBeLessThan(bound);
    }
    const diagnostics = readFileSync(runFileOf(pi.flowHome, runId, "diagnostics.log"), "utf8");
    expect(diagnostics.match(/\[steer_refused\]/g)).toHaveLength(1);
    expect(diagnostics).toMatch(/warn \[steer_refused\]: steer refused \(and any more until one is accepted\): Run .* already has 8 steers/);
  }, TIMEOUT_MS);
});
