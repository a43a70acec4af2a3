import { readFileSync } from "node:fs";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { afterEach, expect, test, vi } from "vitest";
import { ChildSessionFile } from "../../src/harnesses/pi-session-file.ts";
import { runFiles, type RunStore } from "../../src/runs/index.ts";
import { sandboxPerFile, type Sandbox } from "./helpers.ts";

/**
 * Evidence lines are serialised once: a large launch, store value or transcript entry costs one
 * JSON.stringify of its size, not one to redact, one to measure and one to write. Measured as the
 * characters JSON.stringify produced while the line was written.
 */
let box: Sandbox;
let store: RunStore;
sandboxPerFile((fresh, freshStore) => ((box = fresh), (store = freshStore)));
afterEach(() => vi.restoreAllMocks());

const big = "lorem ipsum dolor sit amet ".repeat(4000); // ~108 KB, no secret in it

function stringified(work: () => void): number {
  const original = JSON.stringify;
  let chars = 0;
  vi.spyOn(JSON, "stringify").mockImplementation((...args: Parameters<typeof JSON.stringify>) => {
    const out = original(...args);
    chars += out?.length ?? 0;
    return out;
  });
  work();
  vi.restoreAllMocks();
  return chars;
}

test("a run's launch record is serialised once, and its start line still says its exact size", () => {
  let runId = "";
  const chars = stringified(() => {
    runId = store.create({ kind: "agent", task: { description: "d" }, background: false, launch: { prompt: big } }).runId;
  });
  expect(chars).toBeLessThan(big.length * 1.5);
  const start = JSON.parse(readFileSync(runFiles(store.scope, runId).journal, "utf8").split("\n")[0]!) as { launchBytes: number; launch: unknown };
  expect(start.launch).toEqual({ prompt: big });
  expect(start.launchBytes).toBe(Buffer.byteLength(JSON.stringify({ prompt: big })));
});

test("a journal line is serialised once, redacted, with the fields every line carries", () => {
  const writer = store.create({ kind: "workflow", task: { description: "w" }, background: false });
  const chars = stringified(() => writer.journal({ t: "store", key: "notes", value: { text: big } }));
  expect(chars).toBeLessThan(big.length * 1.5);
  writer.journal({ t: "store", key: "creds", value: { apiKey: "abc-123-def-456" } });
  const lines = readFileSync(runFiles(store.scope, writer.runId).journal, "utf8").trim().split("\n");
  const base = { v: 1, runId: writer.runId, at: expect.any(String) };
  expect(JSON.parse(lines[1]!)).toEqual({ t: "store", key: "notes", value: { text: big }, ...base, seq: 1 });
  expect(JSON.parse(lines[2]!)).toEqual({ t: "store", key: "creds", value: { apiKey: "[REDACTED]" }, ...base, seq: 2 });
  expect(Object.keys(JSON.parse(lines[2]!) as object)).toEqual(["t", "key", "value", "v", "seq", "runId", "at"]);
});

test("a pi child's session entry is serialised once", () => {
  const manager = SessionManager.inMemory(box.project);
  const file = new ChildSessionFile(manager, `${box.root}/session.jsonl`);
  manager.appendMessage({ role: "user", content: big, timestamp: Date.now() });
  const chars = stringified(() => file.close(() => undefined));
  expect(chars).toBeLessThan(big.length * 1.5);
  expect(readFileSync(`${box.root}/session.jsonl`, "utf8")).toContain(big);
});
