/**
 * Resuming a workflow from its journal in real Pi sessions: a background run cancelled when the
 * user quits continues in a new session without paying again for the children that had finished.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { childAnswers, childHangs, type Seen } from "../support/children.ts";
import { callForReceipt } from "../support/receipts.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

const sessions: PiTestSession[] = [];
afterEach(() => {
  // The first session owns the project folder: dispose it last.
  for (const pi of sessions.splice(0).reverse()) pi.dispose();
});

async function session(from?: PiTestSession): Promise<PiTestSession> {
  const pi = await startPiSession(from ? { cwd: from.cwd, env: { PI_FLOW_HOME: from.flowHome } } : {});
  sessions.push(pi);
  return pi;
}

/** The run's journal lines, wherever its session keeps it. */
export function journalOf(flowHome: string, runId: string): Record<string, unknown>[] {
  const projects = join(flowHome, "projects");
  for (const project of readdirSync(projects)) {
    for (const key of readdirSync(join(projects, project, "sessions"))) {
      try {
        const text = readFileSync(join(projects, project, "sessions", key, "runs", runId, "journal.jsonl"), "utf8");
        return text.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
      } catch {
        // Another session's folder.
      }
    }
  }
  throw new Error(`no journal for ${runId}`);
}

const THREE_STEPS = [
  'store("r", Math.random());',
  'store("t", Date.now());',
  "const out = [];",
  'for (const step of ["first", "second", "third"]) {',
  '  const r = await agent({ role: "explorer", description: step, prompt: "Do the " + step + " step.", context: { mode: "none" } });',
  "  out.push(r.value);",
  "}",
  'return { out, r: load("r"), t: load("t") };',
].join("\n");

test("a background run cancelled when the user quits resumes in a new session: finished children are not run again", async () => {
  const first = await session();
  let hanging!: () => void;
  const third = new Promise<void>((resolve) => (hanging = resolve));
  const accepted = await callForReceipt(first, "external_workflow", { script: THREE_STEPS, background: true }, {
    children: [childAnswers("one"), childAnswers("two"), childHangs(hanging)],
  });
  const runId = accepted.run!.runId;
  await third;
  await first.shutdown(); // quit: the background run is cancelled with its running child

  const journal = journalOf(first.flowHome, runId);
  expect(journal.at(-1)).toMatchObject({ t: "terminal", outcome: "cancelled" });
  const stored = Object.fromEntries(journal.filter((line) => line.t === "store").map((line) => [line.key, line.value]));

  const second = await session(first);
  const seen: Seen[] = [];
  const { receipt, run } = await callForReceipt(second, "external_workflow", { resume: runId }, { children: [childAnswers("three", seen)] });
  expect(receipt.ok).toBe(true);
  // Only the child that had not finished asked the model again.
  expect(seen).toHaveLength(1);
  expect(seen[0]!.user).toContain("Do the third step.");
  expect(run).toMatchObject({
    task: { resumedFrom: runId, workflow: "inline" },
    children: { count: 3, failed: 0, replayed: 2, live: 1 },
    output: { value: { out: ["one", "two", "three"], r: stored.r, t: stored.t } },
  });
  expect(run!.runId).not.toBe(runId);

  // inspect says what was replayed and what ran live.
  const inspected = await second.callTool("external_runs", { action: "inspect", runIds: [run!.runId] });
  expect(inspected.text).toContain(`resumed from ${runId}: 2 calls replayed from its journal, 1 ran live`);
});
