/**
 * A run record is a file any process of the user's can write, and a child prompted by a hostile
 * repository may. What `/flow runs` shows of its usage must stay numbers a person can trust: a cost
 * forged negative must not take spending off the total, one forged as text must not fail the list;
 * and what it shows of its names must stay text.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { inspectLines, listedRuns, listLines, runLine } from "../../src/commands/runs.ts";
import { openRunStore, RunRegistry, runFiles, type RunStore } from "../../src/runs/index.ts";

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Settled runs, each record then rewritten on disk with the given usage (and task), as a forger would. */
async function runsWithUsage(usages: Record<string, unknown>[], task: Record<string, unknown> = {}): Promise<{ store: () => RunStore; runIds: string[] }> {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-forged-usage-"));
  // A new registry per store: /flow runs in a later session reads what is on disk.
  const store = () => openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const writer = store();
  const runs = usages.map((_, index) => writer.create({ kind: "agent", task: { description: `Run ${index}` }, background: false }));
  for (const run of runs) run.settle({ outcome: "succeeded", value: "Done." });
  await writer.idle();
  usages.forEach((usage, index) => {
    const path = runFiles(writer.scope, runs[index]!.runId).record;
    const record = JSON.parse(readFileSync(path, "utf8")) as { usage?: unknown; task: Record<string, unknown> };
    record.usage = usage;
    Object.assign(record.task, task);
    writeFileSync(path, JSON.stringify(record).replace('"outputTokens":"1e400"', '"outputTokens":1e400'));
  });
  return { store, runIds: runs.map((run) => run.runId) };
}

test("/flow runs: a cost forged negative takes nothing off the total, and usage forged as text or out of range shows as none", async () => {
  const { store, runIds } = await runsWithUsage([
    { turns: 1, inputTokens: 100, outputTokens: 20, costUsd: 0.25 },
    { turns: -3, inputTokens: -1e6, outputTokens: "1e400", costUsd: -1000 },
    { turns: "many", inputTokens: "10", costUsd: "1.5" },
  ]);
  const reader = store();
  const list = listLines(listedRuns(reader)).join("\n");
  expect(list).toContain("Total cost of these runs: $0.25");
  expect(list).not.toMatch(/NaN|Infinity|-\d|\$-/);
  for (const runId of runIds.slice(1)) {
    const [row, , , ...rest] = inspectLines(reader.view(runId));
    expect(row).not.toMatch(/NaN|Infinity|-\d|\$-/);
    expect(rest.find((line) => line.startsWith("usage:"))).toMatch(/^usage: 0 turns · 0 in \/ 0 out$/);
  }
});

test("/flow runs' picker offers a run whose role was forged with escapes as one line of text: Pi draws its options as they are", async () => {
  const { store, runIds } = await runsWithUsage([{ turns: 1 }], { role: "explorer\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007\u202e" });
  const line = runLine(store().view(runIds[0]!));
  expect(line).toContain("explorer: Run 0");
  expect(line).not.toMatch(/[\u001b\u0007\u202e]|Y3VybC/);
});
