/**
 * Views of big things: a workflow that launched thousands of children. A row redraws with every
 * progress update, so it must stay a screenful however many children there are, and still show
 * what is running and what failed.
 */
import { stripTerminalSequences } from "@earendil-works/pi-tui";
import { expect, test } from "vitest";
import type { ChildEntry } from "../../src/contract/child-entry.ts";
import { workflowRenderers } from "../../src/ui/run-renderers.ts";
import { seen, toolRow, WIDTHS, type Update } from "./views.ts";

test("a workflow with 10,000 children draws a bounded tree: the running and failed ones, the newest, and a count of the rest", () => {
  const now = Date.now();
  const children: ChildEntry[] = Array.from({ length: 10_000 }, (_, index) => ({
    index,
    runId: `ag_${index}`,
    description: `file ${index}`,
    status: index === 17 || index === 9_000 ? "running" : index === 42 ? "failed" : "succeeded",
    startedAt: now - 1000,
    ...(index === 17 ? { activity: "calling read" } : { endedAt: now }),
  }));
  const update: Update = { partial: true, details: { runId: "wf_1", phase: "running", children } };
  const row = toolRow("external_workflow", workflowRenderers, { workflow: "map", description: "Map every file" }, [update], true);
  for (const width of WIDTHS) {
    const lines = row.render(width).map((line) => stripTerminalSequences(line).trimEnd());
    expect(lines.length).toBeLessThan(40);
  }
  const text = seen(row, 120);
  expect(text).toMatch(/├─ … file 17 .*\n +│ +calling read/);
  expect(text).toMatch(/├─ ✗ file 42/);
  expect(text).toMatch(/├─ … file 9000/);
  expect(text).toMatch(/├─ ✓ file 9999/);
  expect(text).toContain("└─ … 9980 more children not shown (2 running, 9997 succeeded, 1 failed in all)");
  // The collapsed row counts them all.
  expect(seen(toolRow("external_workflow", workflowRenderers, { workflow: "map", description: "Map every file" }, [update]), 120)).toContain("9998/10000 (1 failed)");
});
