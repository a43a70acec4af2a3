import { describe, expect, test } from "vitest";
import { helpRenderers, runsRenderers } from "../../src/ui/query-renderers.ts";
import { delegateRenderers, workflowRenderers } from "../../src/ui/run-renderers.ts";
import { seen, toolRow, WIDTHS } from "./views.ts";

/**
 * §17 rendering row, "absent details": the model never needs details, and neither does a row. A
 * result without them (another host, an older session file, a hook that replaced them) still draws
 * its content text, partial or final, collapsed or expanded.
 */
const rows: [string, object, Record<string, unknown>][] = [
  ["external_delegate", delegateRenderers, { role: "explorer", description: "Count files", prompt: "Count them." }],
  ["external_workflow", workflowRenderers, { workflow: "review" }],
  ["external_runs", runsRenderers, { action: "list" }],
  ["external_help", helpRenderers, { topic: "errors" }],
];

describe("§17 rendering: a row with absent details", () => {
  test.each(rows)("%s draws its content text when details are absent", (tool, renderers, args) => {
    for (const expanded of [false, true]) {
      const partial = toolRow(tool, renderers, args, [{ partial: true, text: "PARTIAL-TEXT-41", details: undefined }], expanded);
      expect(seen(partial, 80)).toContain("PARTIAL-TEXT-41");
      const final = toolRow(tool, renderers, args, [{ text: "FINAL-TEXT-42", details: undefined }], expanded);
      expect(seen(final, 80)).toContain("FINAL-TEXT-42");
      const failed = toolRow(tool, renderers, args, [{ text: "FAILED-TEXT-43", details: undefined, isError: true }], expanded);
      expect(seen(failed, 80)).toContain("FAILED-TEXT-43");
    }
  });
});

describe("§17 rendering: details of another shape (another version, an edited session file)", () => {
  const view = { runId: "ag_1", kind: "agent", task: { description: "d" }, state: { status: "done", outcome: "succeeded" }, timing: {}, output: { delivery: "none" }, refs: {} };
  const odd: [string, object, Record<string, unknown>, unknown][] = [
    ["external_delegate", delegateRenderers, { role: "explorer" }, { phase: "settled", run: { runId: "ag_1", state: {} } }],
    ["external_delegate", delegateRenderers, { role: "explorer" }, { phase: "running", progress: { activity: 5 } }],
    ["external_workflow", workflowRenderers, { workflow: "review" }, { phase: "running", children: [{ index: 0, status: "running" }] }],
    ["external_workflow", workflowRenderers, { workflow: "review" }, { phase: "running", children: "three" }],
    ["external_delegate", delegateRenderers, { role: "explorer" }, { phase: "settled", run: { ...view, state: { status: "paused" } } }],
  ];
  test.each(odd)("%s draws its content text instead of throwing at render time", (tool, renderers, args, details) => {
    for (const expanded of [false, true]) {
      const row = toolRow(tool, renderers, args, [{ text: "FINAL-TEXT-44", details }], expanded);
      for (const width of WIDTHS) expect(() => seen(row, width)).not.toThrow();
    }
    expect(seen(toolRow(tool, renderers, args, [{ text: "FINAL-TEXT-44", details }], true), 80)).toMatch(/FINAL-TEXT-44|✓ Delegate|\? Delegate/);
  });
});
