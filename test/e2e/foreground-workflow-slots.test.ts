import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, test, vi } from "vitest";
import { childAnswers, childAnswersWhenReleased, type Seen } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

/**
 * Foreground workflow roots take slots of the process's (PI_FLOW_MAX_WORKFLOWS): each is a sandbox
 * (a worker thread with its memory) and up to `concurrency` children, so a parent's script that
 * starts many at once would otherwise hold as many of both.
 */

let pi: PiTestSession | undefined;
afterEach(() => pi?.dispose());

const script = 'return (await agent({ role: "explorer", prompt: "Look.", context: { mode: "none" } })).value;';

test("a foreground workflow past PI_FLOW_MAX_WORKFLOWS waits, queued, and its sandbox and children start once a slot frees", async () => {
  pi = await startPiSession({ env: { PI_FLOW_MAX_WORKFLOWS: "1" } });
  const first = childAnswersWhenReleased("one");
  const seen: Seen[] = [];
  pi.queueChildren([first.step, childAnswers("two", seen)]);
  const both = pi.runCodemode(`
    const call = () => tools.external_workflow({ script: ${JSON.stringify(script)} });
    const results = await Promise.all([call(), call()]);
    return results.map((result) => result.data.run.state.outcome + ":" + result.data.run.output.value);
  `);
  await first.started;
  // Both runs exist once their records are written; the second one waits for the first's slot.
  const statuses = await vi.waitFor(() => {
    const found = workflowStatuses(pi!.flowHome);
    if (found.length < 2) throw new Error("both workflow runs are not recorded yet");
    return found;
  }, { timeout: 60_000, interval: 20 });
  expect(statuses.sort()).toEqual(["queued", "running"]);
  // Before, the second workflow's child had started beside the first's.
  expect(seen).toHaveLength(0);
  first.release();
  expect((await both).value).toEqual(["succeeded:one", "succeeded:two"]);
  expect(seen).toHaveLength(1);
});

test("past PI_FLOW_MAX_QUEUED waiting, one more foreground workflow is refused, naming both bounds", async () => {
  pi = await startPiSession({ env: { PI_FLOW_MAX_WORKFLOWS: "1", PI_FLOW_MAX_QUEUED: "0" } });
  const first = childAnswersWhenReleased("one");
  pi.queueChildren([first.step]);
  const both = pi.runCodemode(`
    const call = () => tools.external_workflow({ script: ${JSON.stringify(script)} }).then(
      (result) => (result.ok ? result.data.run.state.outcome : result.error.code + ": " + result.error.message),
    );
    return await Promise.all([call(), call()]);
  `);
  await first.started;
  first.release();
  const outcome = await both;
  const [one, two] = (outcome.value ?? [outcome.text]) as string[];
  expect(one).toBe("succeeded");
  expect(two).toMatch(/^request_invalid: .*1 foreground workflows may run at once.*PI_FLOW_MAX_WORKFLOWS.*0 wait.*PI_FLOW_MAX_QUEUED/);
});

/** The status in each workflow run's record, wherever the Flow home keeps it. */
function workflowStatuses(flowHome: string): string[] {
  const statuses: string[] = [];
  const projects = join(flowHome, "projects");
  for (const project of readdirSync(projects)) {
    for (const session of readdirSync(join(projects, project, "sessions"))) {
      const runs = join(projects, project, "sessions", session, "runs");
      for (const runId of readdirSync(runs).filter((name) => name.startsWith("wf_"))) {
        try {
          statuses.push((JSON.parse(readFileSync(join(runs, runId, "record.json"), "utf8")) as { status: string }).status);
        } catch {
          // not written yet
        }
      }
    }
  }
  return statuses;
}
