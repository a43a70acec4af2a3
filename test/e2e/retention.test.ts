import { afterEach, expect, test } from "vitest";
import { childAnswers } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

const sessions: PiTestSession[] = [];
afterEach(() => sessions.splice(0).reverse().forEach((session) => session.dispose()));

async function finishedRun(pi: PiTestSession, answer: string): Promise<string> {
  const result = await pi.callTool(
    "external_delegate",
    { role: "worker", description: "d", prompt: "p", context: { mode: "none" } },
    { children: [childAnswers(answer)] },
  );
  return (result.structuredContent as { data: { run: { runId: string } } }).data.run.runId;
}

const available = async (pi: PiTestSession, runId: string) => {
  const result = await pi.callTool("external_runs", { action: "inspect", runIds: [runId] });
  return (result.structuredContent as { ok: boolean }).ok;
};

test("each session start prunes the project's oldest runs beyond PI_FLOW_RETENTION_MAX_RUNS", async () => {
  const env = { PI_FLOW_RETENTION_MAX_RUNS: "2" };
  const first = await startPiSession({ env });
  sessions.push(first);
  const ids = [await finishedRun(first, "one"), await finishedRun(first, "two"), await finishedRun(first, "three")];
  expect(await available(first, ids[0]!)).toBe(true);
  // A new session of the same project starts: retention runs once, off the start-up path.
  sessions.push(await startPiSession({ cwd: first.cwd, env }));
  await expect.poll(() => available(first, ids[0]!), { timeout: 10_000 }).toBe(false);
  expect(await available(first, ids[1]!)).toBe(true);
  expect(await available(first, ids[2]!)).toBe(true);
});
