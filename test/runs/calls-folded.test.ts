// Paging the calls view of a large workflow reads its journal once while it stays as it was, and
// again as soon as it grows: a reader sees every new call, and page N does not cost N reads.
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, onTestFinished, test, vi } from "vitest";
import { callsDocument } from "../../src/runs/read/calls.ts";

const journalReads = vi.hoisted(() => ({ count: 0 }));
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  // Evidence is read through a descriptor opened by path (runs/fsio.ts openEvidence): count the opens.
  const openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    if (String(path).endsWith("journal.jsonl")) journalReads.count++;
    return (real.openSync as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof real.openSync;
  return { ...real, default: { ...real, openSync }, openSync };
});

const runId = "wf_calls";
const at = "2026-12-02T00:00:00.000Z";
const line = (seq: number, rest: Record<string, unknown>) => `${JSON.stringify({ v: 1, seq, runId, at, ...rest })}\n`;
const agentStart = (seq: number, index: number) =>
  line(seq, { t: "event", name: "agent_start", data: { index, target: "explorer", description: `Part ${index}`, childRunId: `ag_${index}` } });

test("the calls view folds an unchanged journal once across its pages, and a grown one again", () => {
  const dir = fs.mkdtempSync(join(tmpdir(), "pi-flow-calls-"));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  const journal = join(dir, "journal.jsonl");
  fs.writeFileSync(journal, line(0, { t: "start", kind: "workflow", task: { description: "fan-out" }, background: false }) + agentStart(1, 0) + agentStart(2, 1));

  journalReads.count = 0;
  const first = callsDocument(journal, runId);
  const second = callsDocument(journal, runId);
  expect(JSON.parse(second.read(0, second.size).toString()).map((call: { description: string }) => call.description)).toEqual(["Part 0", "Part 1"]);
  expect(second.fingerprint).toBe(first.fingerprint);
  expect(journalReads.count).toBe(1);

  fs.appendFileSync(journal, agentStart(3, 2));
  const grown = callsDocument(journal, runId);
  expect(JSON.parse(grown.read(0, grown.size).toString())).toHaveLength(3);
  expect(journalReads.count).toBe(2);
});
