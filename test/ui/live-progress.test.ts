import { expect, test } from "vitest";
import { forgetProgress, liveProgress, noteProgress } from "../../src/orchestrator/session/live-progress.ts";

test("background progress is kept per run, merged, forgotten on request, and bounded to the newest runs", () => {
  noteProgress("ag_live_1", { progress: { activity: "thinking", usage: { turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0 } } });
  noteProgress("ag_live_1", { children: [] });
  expect(liveProgress("ag_live_1")).toMatchObject({ progress: { activity: "thinking" }, children: [] });
  forgetProgress("ag_live_1");
  expect(liveProgress("ag_live_1")).toBeUndefined();
  for (let index = 0; index < 250; index++) noteProgress(`ag_bound_${index}`, { children: [] });
  expect(liveProgress("ag_bound_0")).toBeUndefined();
  expect(liveProgress("ag_bound_249")).toBeDefined();
});
