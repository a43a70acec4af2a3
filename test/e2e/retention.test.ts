import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionFactory } from "@earendil-works/pi-coding-agent";
import { afterEach, expect, test } from "vitest";
import { RETENTION_EVENT } from "../../src/orchestrator/session/flow-host.ts";
import type { PruneReport } from "../../src/runs/index.ts";
import { childAnswers } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

const sessions: PiTestSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0).reverse()) await session.dispose();
});

/** A session whose retention passes are observed on Pi's event bus, as another extension sees them. */
async function observedSession(options: { cwd?: string; env: Record<string, string> }) {
  const reports: PruneReport[] = [];
  let notify = () => {};
  const watcher: ExtensionFactory = (pi) => {
    pi.events.on(RETENTION_EVENT, (report) => {
      reports.push(report as PruneReport);
      notify();
    });
  };
  const pi = await startPiSession({ ...options, extensions: [watcher] });
  sessions.push(pi);
  const retention = () =>
    reports.length > 0 ? Promise.resolve(reports[0]!) : new Promise<PruneReport>((resolve) => (notify = () => resolve(reports[0]!)));
  return { pi, retention };
}

async function finishedRuns(pi: PiTestSession, count: number): Promise<string[]> {
  const outcome = await pi.runCodemode(
    `const ids = [];
     for (let i = 0; i < ${count}; i++) {
       const r = await tools.external_delegate({ role: "worker", description: "d" + i, prompt: "p", context: { mode: "none" } });
       ids.push(r.data.run.runId);
     }
     return ids;`,
    { children: Array.from({ length: count }, (_, i) => childAnswers(`answer ${i}`)) },
  );
  return outcome.value as string[];
}

const available = async (pi: PiTestSession, runId: string) => {
  const result = await pi.callTool("external_runs", { action: "inspect", runIds: [runId] });
  return (result.structuredContent as { ok: boolean }).ok;
};

/** Whether a run's directory is still anywhere under the Flow home. */
function onDisk(flowHome: string, runId: string): boolean {
  const projects = join(flowHome, "projects");
  return readdirSync(projects).some((project) =>
    readdirSync(join(projects, project, "sessions")).some((session) => existsSync(join(projects, project, "sessions", session, "runs", runId))),
  );
}

test("retention never removes a run of an open session, even one that made more runs than the limit in its first turn", async () => {
  const env = { PI_FLOW_RETENTION_MAX_RUNS: "2" };
  const first = await observedSession({ env });
  // The first prompt follows the start at once, as `pi -p` does: its retention pass may run at any point of this turn.
  const ids = await finishedRuns(first.pi, 4);
  expect(await first.retention()).toMatchObject({ removed: 0 });
  // Another session of the same project starts: its pass sees the first session open.
  const second = await observedSession({ cwd: first.pi.cwd, env });
  expect(await second.retention()).toMatchObject({ removed: 0, live: 4 });
  for (const id of ids) expect(await available(first.pi, id)).toBe(true);
  const waited = await first.pi.callTool("external_runs", { action: "wait", runIds: ids });
  expect((waited.structuredContent as { data: { completed: unknown[] } }).data.completed).toHaveLength(4);

  // Closed for good: the next session start prunes its oldest runs beyond the limit.
  await first.pi.shutdown();
  const third = await observedSession({ cwd: first.pi.cwd, env });
  expect(await third.retention()).toMatchObject({ removed: 2, kept: 2 });
  expect(ids.map((id) => onDisk(first.pi.flowHome, id))).toEqual([false, false, true, true]);
});
