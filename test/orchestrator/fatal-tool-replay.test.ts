// A tools.* failure marked fatal ends its run even when the script catches it. Its journal line
// says so, so a resume of that run (its process died before the run's end was written) ends the
// same way rather than letting the resumed script catch what the first run could not.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterAll, expect, test } from "vitest";
import type { LaunchEnvironment } from "../../src/orchestrator/child/index.ts";
import { planResume, type ResumePlan } from "../../src/orchestrator/workflow/resume/plan.ts";
import { parseSelected } from "../../src/orchestrator/workflow/sources.ts";
import { startWorkflow } from "../../src/orchestrator/workflow/start.ts";
import { runFiles, type RunStore } from "../../src/runs/index.ts";
import { RunTree, type HostError, type WorkflowHost } from "../../runtime/index.ts";
import { sandbox } from "../runs/helpers.ts";

const box = sandbox();
afterAll(() => box.cleanup());

const SCRIPT = `export const apiVersion = 1;
try { await tools.deploy({}); } catch (error) { return "caught " + error.code; }
return "no error";
`;

function start(runs: RunStore, tools: NonNullable<WorkflowHost["tools"]>, resume?: ResumePlan) {
  const selected = { name: "inline", source: "inline" as const, label: "inline.js", text: SCRIPT };
  // Only what a script without agent() calls reads of its environment: where it runs and its store.
  const env = { cwd: box.project, runs } as Partial<LaunchEnvironment> as LaunchEnvironment;
  return startWorkflow({
    workflow: parseSelected(selected),
    selected,
    args: {},
    description: "deploys",
    env,
    tools: () => tools,
    background: false,
    depth: 0,
    tree: { budget: new RunTree(), nested: false },
    ...(resume ? { resume: { plan: resume, replaySafe: new Set<string>() } } : {}),
  });
}

test("a fatal tools.* failure is journaled as fatal, and a resume replays it as fatal: the script cannot catch it the second time either", async () => {
  const runs = box.store("s");
  const deploy = async () => {
    throw Object.assign(new Error("the deploy lock is held by someone else"), { code: "deploy_locked", fatal: true }) satisfies HostError;
  };
  const first = start(runs, { deploy });
  const settled = await first.settled;
  expect(settled.view.state).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("the deploy lock is held") } });
  await runs.idle();

  // The process died after the tool's answer was journaled, before the run's end was written.
  const files = runFiles(runs.scope, first.runId);
  const lines = readFileSync(files.journal, "utf8").trim().split("\n");
  const result = lines.map((line) => JSON.parse(line) as { t: string; name?: string; data?: Record<string, unknown> }).find((line) => line.name === "tool_result");
  expect(result?.data).toMatchObject({ ok: false, code: "deploy_locked", fatal: true });
  writeFileSync(files.journal, `${lines.filter((line) => (JSON.parse(line) as { t: string }).t !== "terminal").join("\n")}\n`);
  rmSync(files.record);

  const later = box.otherProcess("s");
  const plan = planResume(later, first.runId);
  if (!("plan" in plan)) throw new Error("the interrupted run should be resumable");
  let deployed = 0;
  const resumed = await start(later, { deploy: async () => (deployed++, "deployed") }, plan.plan).settled;
  expect(deployed).toBe(0);
  expect(resumed.view.state).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("the deploy lock is held") } });
  expect(resumed.value).toBeUndefined();
});
