import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { runReport } from "../../src/report/index.ts";
import { openRunStore, RunRegistry, runFiles, type RunStore } from "../../src/runs/index.ts";

/**
 * A run record is a file any process of the user's can write, and a child prompted by a hostile
 * repository may: the report of a workflow must stay a page of text however its children's records
 * are forged, and one forged record must not cost the report of every run beside it.
 */
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

type Record = { [key: string]: unknown; task: { [key: string]: unknown } };

/** A settled workflow with two settled agent children, and a way to rewrite a run's record as a forger would. */
async function workflowOfTwo(): Promise<{ store: () => RunStore; workflow: string; children: string[]; forge: (runId: string, change: (record: Record) => void) => void }> {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-forged-"));
  // A new registry per store: the report reads what is on disk, not what this process remembers.
  const store = () => openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const writer = store();
  const workflow = writer.create({ kind: "workflow", task: { description: "Review two modules" }, background: false });
  const children = ["alpha", "beta"].map((name) => writer.create({ kind: "agent", task: { description: `Review ${name}`, parentRunId: workflow.runId }, background: false }));
  for (const child of children) child.settle({ outcome: "succeeded", value: `${child.runId} looks fine` });
  workflow.settle({ outcome: "succeeded", value: { result: 2 } });
  await writer.idle();
  const forge = (runId: string, change: (record: Record) => void) => {
    const path = runFiles(writer.scope, runId).record;
    const record = JSON.parse(readFileSync(path, "utf8")) as Record;
    change(record);
    writeFileSync(path, JSON.stringify(record));
  };
  return { store, workflow: workflow.runId, children: children.map((child) => child.runId), forge };
}

test("usage forged as strings is neither markup in the page nor a failed report: it counts as none", async () => {
  const { store, workflow, children, forge } = await workflowOfTwo();
  const markup = "<img src=x onerror=alert(1)>";
  forge(children[0]!, (record) => {
    record.usage = { turns: markup, toolCalls: markup, inputTokens: markup, outputTokens: 7, costUsd: "1.5" };
  });
  forge(children[1]!, (record) => {
    record.usage = { turns: 2, toolCalls: 3, inputTokens: 100, outputTokens: 20, costUsd: 0.25 };
  });
  const page = runReport(store(), workflow);
  expect(page).not.toContain("<img");
  // The honest child's numbers still add up; the forged ones count as zero.
  expect(page).toContain("<td>2</td><td>3</td><td>100 in / 27 out</td><td class=\"cost\">$0.2500</td>");
  expect(page).toContain("0 turns · 0 tool calls · 0 in / 7 out · cost $0.0000");
});

test("a run forged to be its own parent, or two runs each other's, is reported once each instead of overflowing the stack", async () => {
  const { store, workflow, children, forge } = await workflowOfTwo();
  forge(workflow, (record) => {
    record.task.parentRunId = children[0];
  });
  forge(children[1]!, (record) => {
    record.task.parentRunId = children[1];
  });
  const page = runReport(store(), workflow);
  // The workflow, then its child alpha (whose child it now claims to be), each once; beta is its own parent, in no tree.
  expect([...page.matchAll(/<tr class="run [^"]*" data-run="(\w+)"/g)].map((match) => match[1])).toEqual([workflow, children[0]]);
  expect(runReport(store(), children[1]!)).toContain("Review beta");
});

test("a start or end that is no time leaves that run without a bar, and every other run's bar in place", async () => {
  const { store, workflow, children, forge } = await workflowOfTwo();
  forge(children[0]!, (record) => {
    record.startedAt = "yesterday, around noon";
  });
  forge(children[1]!, (record) => {
    record.endedAt = "not yet";
  });
  const page = runReport(store(), workflow);
  expect(page).not.toContain("NaN");
  const bars = [...page.matchAll(/data-run="(\w+)"[\s\S]*?<td class="bar">(<span class="span [^"]*" style="left:([\d.]+)%;width:([\d.]+)%"|<span class="note">start unknown)/g)];
  const byRun = new Map(bars.map((bar) => [bar[1], bar]));
  expect(byRun.size).toBe(3);
  expect(byRun.get(children[0])![2]).toContain("start unknown");
  for (const bar of [byRun.get(workflow)!, byRun.get(children[1])!]) {
    const [left, width] = [Number(bar[3]), Number(bar[4])];
    expect(left >= 0 && width > 0 && left + width <= 100.001).toBe(true);
  }
  expect(page).toMatch(/<th>timeline \(\d+ ms\)<\/th>/);
});

test("an outcome forged as the name of an object's own property is counted as any other", async () => {
  const { store, workflow, children, forge } = await workflowOfTwo();
  forge(children[0]!, (record) => {
    record.outcome = "constructor";
  });
  forge(children[1]!, (record) => {
    record.outcome = "__proto__";
  });
  const page = runReport(store(), workflow);
  expect(page).toContain('<span class="badge succeeded">succeeded: 1</span> <span class="badge constructor">constructor: 1</span> <span class="badge __proto__">__proto__: 1</span>');
});

test("an error, role, outcome or end forged as something other than text is shown as text, and the report of the runs beside it is still made", async () => {
  const { store, workflow, children, forge } = await workflowOfTwo();
  forge(children[0]!, (record) => {
    record.outcome = "failed";
    record.error = { code: 5, message: { why: "<b>forged</b>" } };
    record.task.role = { toString: 1 };
  });
  forge(children[1]!, (record) => {
    record.outcome = { toString: 1 };
    record.error = "a plain string";
    record.endedAt = { toString: 1 };
  });
  const page = runReport(store(), workflow);
  expect(page).not.toContain("<b>");
  expect(page).toContain("5: {&quot;why&quot;:&quot;&lt;b&gt;forged&lt;/b&gt;&quot;}");
  expect(page).toContain('{&quot;toString&quot;:1}');
  expect(page).toContain("Review beta");
});
