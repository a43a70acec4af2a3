import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { childHangs } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { isRunId } from "../../src/runs/ids.ts";

/**
 * A burst of background delegations from one codemode script (all started at once, as
 * Promise.all starts them) in a real Pi session: the session queues at most PI_FLOW_MAX_QUEUED of
 * them behind its busy slots and refuses the rest with request_invalid naming the bound, and
 * creating the accepted runs leaves the host's event loop free between them: a timer that is due
 * fires while the burst is still creating runs. PI_FLOW_BACKGROUND_FLOOD=10000 sends the size of
 * the reported finding.
 */

const FLOOD = Number(process.env.PI_FLOW_BACKGROUND_FLOOD ?? 1000);
/** Room for a loaded machine: this bounds a hang, it is not a speed target. */
const TIMEOUT_MS = Math.max(60_000, FLOOD * 30);
const SLOTS = 2;
const QUEUED = 60;

let pi: PiTestSession | undefined;
afterEach(() => pi?.dispose());

/** How many run folders the session's Flow home holds now. */
function runFolders(flowHome: string): number {
  const projects = join(flowHome, "projects");
  if (!existsSync(projects)) return 0;
  let count = 0;
  for (const project of readdirSync(projects)) {
    const sessions = join(projects, project, "sessions");
    if (!existsSync(sessions)) continue;
    for (const key of readdirSync(sessions)) {
      const runs = join(sessions, key, "runs");
      if (existsSync(runs)) count += readdirSync(runs).filter(isRunId).length;
    }
  }
  return count;
}

describe("a burst of background delegations", () => {
  test(`${FLOOD} at once: ${SLOTS} run, ${QUEUED} wait, the rest are refused naming the bound, and the event loop turns while runs are created`, async () => {
    const session = await startPiSession({ env: { PI_FLOW_MAX_BACKGROUND: String(SLOTS), PI_FLOW_MAX_QUEUED: String(QUEUED) } });
    pi = session;
    session.queueChildren(Array.from({ length: SLOTS }, () => childHangs()));
    // A timer that re-arms itself: each time it fires it notes how many runs exist by then.
    const seenByTimer: number[] = [];
    let ticking = true;
    const tick = () => {
      seenByTimer.push(runFolders(session.flowHome));
      if (ticking) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    const burst = await session.runCodemode(`
      const answers = await Promise.all(Array.from({ length: ${FLOOD} }, (_, i) =>
        tools.external_delegate({ role: "worker", description: "b" + i, prompt: "p" + i, context: { mode: "none" }, background: true })));
      const refused = answers.filter((answer) => !answer.ok);
      return {
        accepted: answers.filter((answer) => answer.ok).map((answer) => answer.data.run.state.status),
        codes: [...new Set(refused.map((answer) => answer.error.code))],
        message: refused[0]?.error.message,
      };
    `);
    ticking = false;
    const { accepted, codes, message } = burst.value as { accepted: string[]; codes: string[]; message: string };
    expect(accepted.length).toBe(SLOTS + QUEUED);
    expect(accepted.filter((status) => status === "queued")).toHaveLength(QUEUED);
    expect(codes).toEqual(["request_invalid"]);
    expect(message).toContain(`at most ${QUEUED} background runs may wait for a slot`);
    expect(runFolders(session.flowHome)).toBe(SLOTS + QUEUED);
    // The timer fired while some, not all, of the accepted runs existed: creation yielded.
    expect(seenByTimer.some((count) => count > 0 && count < SLOTS + QUEUED)).toBe(true);
    await session.shutdown();
  }, TIMEOUT_MS);
});
