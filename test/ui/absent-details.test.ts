import { describe, expect, test } from "vitest";
import { helpRenderers, runsRenderers } from "../../src/ui/query-renderers.ts";
import { delegateRenderers, workflowRenderers } from "../../src/ui/run-renderers.ts";
import { seen, toolRow } from "./views.ts";

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
