import { describe, expect, it } from "vitest";
import { evidenceReads } from "../../src/runs/fsio.ts";
import { codeOf, sandboxPerFile, type Sandbox } from "./helpers.ts";

let box: Sandbox;
sandboxPerFile((fresh) => (box = fresh));

const PAGE = 16 * 1024;
const MB = 1000 * 1000;

/** A settled workflow run whose launch record holds a script of about `bytes` bytes. */
function runWithLaunch(bytes: number): string {
  const store = box.store();
  // Varied text, so the pages are not all alike; plain words redact quickly.
  const script = Array.from({ length: Math.ceil(bytes / 29) }, (_, i) => `// line ${String(i).padStart(20, "0")}\n`).join("").slice(0, bytes);
  const run = store.create({ kind: "workflow", task: { description: `launch of ${bytes}` }, background: false, launch: { script, args: { n: 1 } } });
  run.settle({ outcome: "succeeded", value: null });
  return run.runId;
}

/** Bytes read from evidence files to serve one page of the launch view. */
function pageCost(runId: string, cursor?: string): { cost: number; text: string; next?: string } {
  const store = box.store();
  const before = evidenceReads.bytes;
  const payload = store.inspectSingle(runId, "launch", { limitBytes: PAGE, ...(cursor ? { cursor } : {}) });
  return { cost: evidenceReads.bytes - before, text: payload.page.text, ...(payload.page.nextCursor ? { next: payload.page.nextCursor } : {}) };
}

describe("the launch view pages in O(page)", () => {
  it("costs the same per page for a 1, 4 and 16 MB launch record, and concatenates to the record", () => {
    const costs: number[] = [];
    for (const size of [1 * MB, 4 * MB, 16 * MB]) {
      const runId = runWithLaunch(size);
      const first = pageCost(runId);
      expect(first.text).toMatch(/^\{"script":"\/\/ line 0+\\n/);
      const second = pageCost(runId, first.next);
      costs.push(first.cost, second.cost);
      // Jump to the end: the last page is no dearer than the first.
      let page = second;
      for (let i = 0; i < 3 && page.next; i++) page = pageCost(runId, page.next);
      costs.push(page.cost);
    }
    // Each page reads its own bytes plus the start line's head (at most 64 KiB), never the record.
    for (const cost of costs) expect(cost).toBeLessThanOrEqual(PAGE + 1 + 64 * 1024 + 2);
  }, 300_000); // writing (and redacting) 21 MB of launch records takes a while on a busy machine

  it("serves the whole record losslessly, as JSON, across pages", () => {
    const runId = runWithLaunch(100_000);
    let text = "";
    let cursor: string | undefined;
    do {
      const page = pageCost(runId, cursor);
      text += page.text;
      cursor = page.next;
    } while (cursor);
    const parsed = JSON.parse(text) as { script: string; args: unknown };
    expect(parsed.script).toHaveLength(100_000);
    expect(parsed.args).toEqual({ n: 1 });
  });

  it("refuses a launch record over 64 MiB before the run exists", () => {
    const store = box.store();
    const script = "x".repeat(64 * 1024 * 1024);
    expect(codeOf(() => store.create({ kind: "workflow", task: { description: "too big" }, background: false, launch: { script } }))).toBe("request_invalid");
  }, 300_000);
});
