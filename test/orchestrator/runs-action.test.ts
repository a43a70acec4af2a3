// A resume tells an unanswered external_runs steer from a read by the action its journal keeps. The
// script chooses that text, so only the tool's own actions are kept: anything else (a token passed
// as an action, say) never reaches the journal, cut or whole.
import { expect, test } from "vitest";
import { runsAction, safeToReplay } from "../../src/orchestrator/workflow/resume/plan.ts";

test("only external_runs's own actions are journaled, and only its steer is unsafe to send again", () => {
  expect(runsAction("external_runs", { action: "steer", runIds: [] })).toBe("steer");
  expect(runsAction("external_runs", { action: "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789" })).toBeUndefined();
  expect(runsAction("external_runs", ["steer"])).toBeUndefined();
  expect(runsAction("external_delegate", { action: "steer" })).toBeUndefined();
  const safe = new Set(["external_runs"]);
  expect(safeToReplay({ tool: "external_runs", action: "steer" }, safe)).toBe(false);
  expect(safeToReplay({ tool: "external_runs", action: "wait" }, safe)).toBe(true);
  expect(safeToReplay({ tool: "external_runs" }, safe)).toBe(true);
  expect(safeToReplay({ tool: "bash" }, safe)).toBe(false);
});
