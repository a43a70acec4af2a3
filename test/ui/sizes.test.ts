/**
 * Views of big things: a workflow that launched thousands of children. A row redraws with every
 * progress update, so it must stay a screenful however many children there are, and still show
 * what is running and what failed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripTerminalSequences } from "@earendil-works/pi-tui";
import { expect, onTestFinished, test } from "vitest";
import { listedRuns, listLines } from "../../src/commands/runs.ts";
import { openRunStore, RunRegistry } from "../../src/runs/index.ts";
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

test("/flow runs lists a child whose workflow gave it a description of a megabyte in a line of at most a few hundred characters, its status and spend kept", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pi-flow-ui-sizes-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  // agent() takes a description up to its options' limit (callArgsChars, 1 MiB): Pi's selector wraps each option whole.
  const run = store.create({ kind: "agent", task: { description: `Summarize ${"chapter ".repeat(130_000)}` }, background: false });
  run.settle({ outcome: "succeeded", value: "Done." });
  await store.idle();
  const [line] = listLines(listedRuns(store));
  expect(line!.length).toBeLessThan(400);
  expect(line).toMatch(new RegExp(`^✓ ${run.runId} agent: Summarize chapter chapter .*… · succeeded`));
});
