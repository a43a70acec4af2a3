/**
 * The counts a person reads in a row: one child is "1 child", not "1 children", in /flow runs'
 * rows; and a run report's durations never read "60 s" past a minute.
 */
import { expect, test } from "vitest";
import { runLine } from "../../src/commands/runs.ts";
import type { RunView } from "../../src/contract/run-schema.ts";
import { formatDuration } from "../../src/report/totals.ts";

/** A settled workflow's view with `count` children: only what a row reads of it. */
const workflowView = (count: number, failed = 0) =>
  ({
    runId: "wf_0000000000_0000000000",
    kind: "workflow",
    task: { description: "Sort the issues.", workflow: "triage" },
    state: { status: "done", outcome: "succeeded" },
    timing: { startedAt: "2026-12-04T07:00:00.000Z", durationMs: 1_200 },
    children: { count, failed },
  }) as unknown as RunView;

test("/flow runs' row counts one child in the singular, and more in the plural", () => {
  expect(runLine(workflowView(1))).toContain("· succeeded · 1 child · 1.2s");
  expect(runLine(workflowView(3, 1))).toContain("· succeeded · 3 children, 1 failed · 1.2s");
});

test("the run report's durations floor their seconds: 119.6 s is 1 min 59 s", () => {
  expect(formatDuration(119_600)).toBe("1 min 59 s");
  expect(formatDuration(60_000)).toBe("1 min 0 s");
});
