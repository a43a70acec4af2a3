// A run whose settle throws (here the store's writer seam throws once the terminal line is written,
// as a failing disk would) still ends: failed, with why, never live in this process, so a wait on it
// returns and a list shows it ended.
import { afterEach, expect, test } from "vitest";
import { startRun } from "../../src/orchestrator/lifecycle/index.ts";
import { ResultOwnership } from "../../src/orchestrator/session/ownership.ts";
import { waitForRuns } from "../../src/orchestrator/session/wait.ts";
import { sandbox, type Sandbox } from "../runs/helpers.ts";

let box: Sandbox | undefined;
afterEach(() => box?.cleanup());

test("a run whose settle throws settles failed with why: a wait on it returns and the list shows it ended", async () => {
  box = sandbox();
  const runs = box.store("s", {
    hooks: {
      at: (point) => {
        if (point === "terminal-written") throw new Error("the disk went away");
      },
    },
  });
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const started = startRun<string>({
    runs,
    create: { kind: "agent", background: true, task: { description: "settles badly" } },
    work: async () => {
      await finished;
      return "done";
    },
    recover: () => "recovered",
    settle: (writer, value) => writer.settle({ outcome: "succeeded", value }),
  });
  // The wait is in place before the run ends, as a model's external_runs wait would be.
  const waiting = waitForRuns(runs, new ResultOwnership(() => undefined), { runIds: [started.runId] }, undefined);
  finish();

  const settled = await started.settled;
  expect(settled.view.state).toMatchObject({ status: "done", outcome: "failed", error: { code: "failed", message: "the run could not settle: the disk went away" } });
  expect(settled.warnings).toContain("evidence_incomplete");
  const { payload } = await waiting;
  expect(payload.completed.map((run) => [run.runId, run.state.outcome])).toEqual([[started.runId, "failed"]]);
  expect(payload.pending).toEqual([]);
  const listed = runs.list().runs.find((run) => run.runId === started.runId);
  expect(listed?.state).toMatchObject({ status: "done", outcome: "failed" });
  expect(runs.registry.isLive(started.runId)).toBe(false);
});

test("a run whose set-up throws once it is registered ends failed at once, with why, instead of staying live", async () => {
  box = sandbox();
  const runs = box.store("s");
  let worked = false;
  const started = startRun<string>({
    runs,
    create: { kind: "agent", background: true, task: { description: "cannot start" } },
    prepare: () => {
      throw new Error("the steering inbox could not open");
    },
    work: async () => ((worked = true), "done"),
    recover: () => "recovered",
    settle: (writer, value) => writer.settle({ outcome: "succeeded", value }),
  });
  const settled = await started.settled;
  expect(settled.view.state).toMatchObject({ status: "done", outcome: "failed", error: { message: "the run could not start: the steering inbox could not open" } });
  expect(worked).toBe(false);
  const { payload } = await waitForRuns(runs, new ResultOwnership(() => undefined), { runIds: [started.runId] }, undefined);
  expect(payload.completed.map((run) => run.state.outcome)).toEqual(["failed"]);
  expect(runs.registry.isLive(started.runId)).toBe(false);
});
