import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { succeed } from "../../src/contract/envelope.ts";
import type { RunView } from "../../src/contract/run-schema.ts";
import { runFiles } from "../../src/runs/home.ts";
import { formatBatchText, newRunId, type RunStore, type RunWriter } from "../../src/runs/index.ts";
import { scopeToken } from "../../src/runs/home.ts";
import { codeOf, expectValidView, sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
let store: RunStore;
sandboxPerTest((fresh, freshStore) => ((box = fresh), (store = freshStore)));

function settledRuns(kind: "agent" | "workflow", n: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const w = store.create({ kind, task: { description: `${kind} ${i}` }, background: false });
    w.settle({ outcome: "succeeded", value: i });
    ids.push(w.runId);
  }
  return ids;
}

/** A live run that has no saved evidence: registered, but its directory is absent (writes failing). */
function liveWithoutRecord(kind: "agent" | "workflow", description: string): string {
  const runId = newRunId(kind);
  box.registry.register({
    runId,
    kind,
    scope: scopeToken(store.scope),
    task: { description },
    background: true,
    startedAt: new Date().toISOString(),
  });
  return runId;
}

describe("list", () => {
  it("lists agent runs and workflows as two independent streams, newest first", () => {
    const agents = settledRuns("agent", 5);
    const workflows = settledRuns("workflow", 3);
    const page = store.list({ limit: 2 });
    expect(page.runs.map((r) => r.runId)).toEqual([agents[4], agents[3]]);
    expect(page.workflows.map((r) => r.runId)).toEqual([workflows[2], workflows[1]]);
    [...page.runs, ...page.workflows].forEach(expectValidView);

    // Continue only the runs stream: the workflows stream starts over, independently.
    const next = store.list({ limit: 2, cursor: page.nextCursor as string });
    expect(next.runs.map((r) => r.runId)).toEqual([agents[2], agents[1]]);
    expect(next.workflows.map((r) => r.runId)).toEqual([workflows[2], workflows[1]]);
    const wfNext = store.list({ limit: 2, workflowCursor: page.nextWorkflowCursor as string });
    expect(wfNext.workflows.map((r) => r.runId)).toEqual([workflows[0]]);
    expect(wfNext.nextWorkflowCursor).toBeUndefined();

    // Swapping the streams' cursors is refused.
    expect(codeOf(() => store.list({ cursor: page.nextWorkflowCursor as string }))).toBe("cursor_invalid");
    expect(codeOf(() => store.list({ workflowCursor: page.nextCursor as string }))).toBe("cursor_invalid");
  });

  it("walks every run exactly once across pages", () => {
    const agents = settledRuns("agent", 7);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = store.list(cursor ? { limit: 3, cursor } : { limit: 3 });
      seen.push(...page.runs.map((r) => r.runId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...agents].reverse());
  });

  it("shows a live run with a record where the record falls, with live state", () => {
    const [old] = settledRuns("agent", 1);
    const live = store.create({ kind: "agent", task: { description: "live" }, background: true });
    const page = store.list();
    expect(page.runs.map((r) => [r.runId, r.live, r.state.status])).toEqual([
      [live.runId, true, "running"],
      [old, false, "done"],
    ]);
  });

  it("puts live runs with no record first, counting against limit, and never skips one saved between pages", () => {
    const saved = settledRuns("agent", 2);
    const liveA = liveWithoutRecord("agent", "live a");
    const liveB = liveWithoutRecord("agent", "live b");
    const first = store.list({ limit: 1 });
    expect(first.runs.map((r) => r.runId)).toEqual([liveB]);
    expect(first.runs[0]).toMatchObject({ live: true, state: { status: "running" } });
    expectValidView(first.runs[0] as RunView);

    // A live run that gets its record between pages is still served (here: from its record).
    const writer: RunWriter = store.create({ kind: "agent", task: { description: "saved meanwhile" }, background: false });
    const rest: string[] = [];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = store.list({ limit: 1, cursor });
      rest.push(...page.runs.map((r) => r.runId));
      cursor = page.nextCursor;
    }
    // liveA next, then the saved rows. The listing had not reached its saved rows when the new run
    // was saved, so the saved stage still starts from the newest record and includes it.
    expect(rest).toEqual([liveA, writer.runId, ...[...saved].reverse()]);
    expect(store.list().runs.map((r) => r.runId)).toContain(writer.runId);
  });

  it("fails with cursor_stale when the bookmarked live run has left the registry", () => {
    liveWithoutRecord("agent", "a");
    const bookmarked = liveWithoutRecord("agent", "b");
    const page = store.list({ limit: 1 });
    expect(page.runs[0]?.runId).toBe(bookmarked);
    box.registry.settle(
      bookmarked,
      { outcome: "cancelled", endedAt: new Date().toISOString() },
      undefined,
      () => page.runs[0] as RunView,
    );
    box.registry.release(bookmarked);
    expect(codeOf(() => store.list({ limit: 1, cursor: page.nextCursor as string }))).toBe("cursor_stale");
  });

  it("leaves a run started after the listing reached its saved rows for the next fresh listing", () => {
    settledRuns("agent", 3);
    const page = store.list({ limit: 2 });
    const late = store.create({ kind: "agent", task: { description: "late" }, background: false });
    late.settle({ outcome: "succeeded", value: 1 });
    const next = store.list({ limit: 2, cursor: page.nextCursor as string });
    expect(next.runs.map((r) => r.runId)).not.toContain(late.runId);
    expect(store.list({ limit: 1 }).runs[0]?.runId).toBe(late.runId);
  });

  it("skips a run directory with nothing readable in it", async () => {
    const [a, b] = settledRuns("agent", 2);
    await store.idle();
    const files = runFiles(store.scope, a as string);
    rmSync(files.record);
    rmSync(files.journal);
    const fresh = box.otherProcess();
    expect(fresh.list().runs.map((r) => r.runId)).toEqual([b]);
  });
});

describe("batch inspection", () => {
  const measure = (entries: RunView[], nextCursor?: string) => {
    const payload = nextCursor ? { mode: "batch" as const, entries, nextCursor } : { mode: "batch" as const, entries };
    return {
      text: Buffer.byteLength(formatBatchText(entries, nextCursor)),
      envelope: Buffer.byteLength(JSON.stringify(succeed("external_runs", "inspect", payload))),
    };
  };

  it("serves entries in request order while each fits limitBytes in both channels, with one cursor", () => {
    const ids = settledRuns("agent", 6);
    const one = store.inspectBatch([ids[0]]);
    const size = measure(one.entries);
    const limitBytes = Math.max(size.text, size.envelope) * 3 + 200;
    const served: string[] = [];
    let cursor: string | undefined;
    do {
      const page = store.inspectBatch(ids, cursor ? { limitBytes, cursor } : { limitBytes });
      const m = measure(page.entries, page.nextCursor);
      expect(m.text).toBeLessThanOrEqual(limitBytes);
      expect(m.envelope).toBeLessThanOrEqual(limitBytes);
      expect(page.entries.length).toBeGreaterThan(0);
      served.push(...page.entries.map((e) => e.runId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(served).toEqual(ids);
  });

  it("a page holds as many entries as fit, not fewer: one more would pass limitBytes in a channel", () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const w = store.create({ kind: "agent", task: { description: `agent ${i}` }, background: false });
      w.settle({ outcome: "succeeded", value: "v".repeat(40 * i) }); // entries of different sizes
      ids.push(w.runId);
    }
    const all = store.inspectBatch(ids, { limitBytes: 1024 * 1024 }).entries;
    expect(all).toHaveLength(6);
    const alone = measure([all[0]!]);
    const smallest = Math.max(alone.text, alone.envelope);
    let checked = 0;
    for (let limitBytes = smallest; limitBytes < smallest * 8; limitBytes += 97) {
      let page: ReturnType<RunStore["inspectBatch"]>;
      try {
        page = store.inspectBatch(ids, { limitBytes });
      } catch {
        continue; // page_too_small: the first entry and its cursor do not fit yet
      }
      checked++;
      const served = page.entries.length;
      if (served === ids.length) continue;
      // The page one entry longer, with the cursor it would carry (as long as this one's, or none after the last).
      const longer = measure(all.slice(0, served + 1), served + 1 < ids.length ? page.nextCursor : undefined);
      expect(longer.text > limitBytes || longer.envelope > limitBytes, `limitBytes ${limitBytes}: ${served} served`).toBe(true);
    }
    expect(checked).toBeGreaterThan(20);
  });

  it("a one-element summary inspection is a batch", () => {
    const [id] = settledRuns("workflow", 1);
    const res = store.inspect({ runIds: [id], view: "summary" });
    expect(res).toMatchObject({ mode: "batch", entries: [{ runId: id }] });
    expect(res).not.toHaveProperty("nextCursor");
  });

  it("fails with page_too_small rather than dropping a target", () => {
    const ids = settledRuns("agent", 2);
    expect(codeOf(() => store.inspectBatch(ids, { limitBytes: 100 }))).toBe("page_too_small");
  });

  it("fails the whole call when any target is unavailable", () => {
    const ids = settledRuns("agent", 2);
    const unknown = "ag_0mx1xga91_zzzzzzzzzz";
    expect(codeOf(() => store.inspectBatch([...ids, unknown]))).toBe("run_unavailable");
  });

  it("binds its cursor to the target set", () => {
    const ids = settledRuns("agent", 4);
    const single = measure(store.inspectBatch([ids[0]]).entries);
    const page = store.inspectBatch(ids, { limitBytes: Math.max(single.text, single.envelope) + 300 });
    expect(page.nextCursor).toBeDefined();
    expect(codeOf(() => store.inspectBatch([...ids].reverse(), { cursor: page.nextCursor as string }))).toBe("cursor_invalid");
    expect(codeOf(() => store.inspectBatch(ids.slice(0, 3), { cursor: page.nextCursor as string }))).toBe("cursor_invalid");
  });
});
