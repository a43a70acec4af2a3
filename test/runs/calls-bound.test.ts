// The calls view folds a workflow's journal in memory: a journal past its bound is a typed
// refusal naming the journal view, never a read of the whole file.
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, onTestFinished, test } from "vitest";
import { CALLS_JOURNAL_MAX_BYTES, workflowCalls } from "../../src/runs/read/calls.ts";

test("a journal over the calls view's bound is run_unavailable, pointing at the views that page it; a missing one has no calls", () => {
  const dir = mkdtempSync(join(tmpdir(), "pi-flow-calls-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const journal = join(dir, "journal.jsonl");
  writeFileSync(journal, "");
  truncateSync(journal, CALLS_JOURNAL_MAX_BYTES + 1); // sparse: nothing is written or read
  expect(() => workflowCalls(journal, "wf_x")).toThrow(expect.objectContaining({ code: "run_unavailable", message: expect.stringContaining("its summary, output and diagnostics views page without that bound") }));
  expect(workflowCalls(join(dir, "absent.jsonl"), "wf_x")).toEqual([]);
});
