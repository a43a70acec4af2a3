import { describe, expect, it } from "vitest";
import { deliver, INLINE_LIMIT_BYTES, REDACTED, type RunStore } from "../../src/runs/index.ts";
import { expectValidView, sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
let store: RunStore;
sandboxPerTest((fresh, freshStore) => ((box = fresh), (store = freshStore)));

/** Page the final view to the end the way the contract's paged-final example does. */
function readFinal(runId: string, limitBytes = 64): { encoding: string; raw: string; value: unknown } {
  let raw = "";
  let encoding = "";
  let cursor: string | undefined;
  do {
    const res = store.inspectSingle(runId, "final", cursor ? { limitBytes, cursor } : { limitBytes });
    expect(res.finalAvailable).toBe(true);
    expect(Buffer.byteLength(res.page.text)).toBeLessThanOrEqual(limitBytes);
    encoding = res.page.encoding;
    raw += res.page.text;
    cursor = res.page.nextCursor;
  } while (cursor);
  return { encoding, raw, value: encoding === "json" ? (JSON.parse(raw) as { result: unknown }).result : raw };
}

/** A string whose JSON encoding is exactly `n` UTF-8 bytes (two of them are the quotes). */
const stringOfJsonBytes = (n: number) => "x".repeat(n - 2);

describe("delivery", () => {
  it("inlines exactly up to 16 KiB of UTF-8 JSON and delivers anything larger by reference", () => {
    expect(deliver(stringOfJsonBytes(INLINE_LIMIT_BYTES))).toMatchObject({ delivery: "inline", bytes: 16384 });
    expect(deliver(stringOfJsonBytes(INLINE_LIMIT_BYTES + 1))).toMatchObject({ delivery: "reference", bytes: 16385 });
    // Measured in UTF-8 bytes, not characters: 8192 two-byte characters plus quotes do not fit.
    expect(deliver("é".repeat(8192)).delivery).toBe("reference");

    const small = store.create({ kind: "agent", task: { description: "small" }, background: false });
    expect(small.settle({ outcome: "succeeded", value: stringOfJsonBytes(16384) }).view.output.delivery).toBe("inline");
    const large = store.create({ kind: "agent", task: { description: "large" }, background: false });
    const { view } = large.settle({ outcome: "succeeded", value: stringOfJsonBytes(16385) });
    expectValidView(view);
    expect(view.output).toEqual({ finalAvailable: true, delivery: "reference" });
    expect(view.refs.final).toEqual({ action: "inspect", runIds: [large.runId], view: "final" });
  });

  it("never truncates: a reference result pages back whole", () => {
    const value = Array.from({ length: 3000 }, (_, i) => `line ${i}: ✓ données 数据 🚀`).join("\n");
    const agent = store.create({ kind: "agent", task: { description: "big text" }, background: false });
    agent.settle({ outcome: "succeeded", value });
    expect(readFinal(agent.runId, 100)).toEqual({ encoding: "text", raw: value, value });

    const structured = { items: Array.from({ length: 2000 }, (_, i) => ({ i, label: `é${i}` })) };
    const workflow = store.create({ kind: "workflow", task: { description: "big json" }, background: false });
    workflow.settle({ outcome: "succeeded", value: structured });
    const read = readFinal(workflow.runId, 64);
    expect(read.encoding).toBe("json");
    expect(read.value).toEqual(structured);
  });

  it.each([
    ["false", false],
    ["null", null],
    ["zero", 0],
    ["the empty string", ""],
  ])("treats %s as a valid result", (_name, value) => {
    for (const kind of ["agent", "workflow"] as const) {
      const run = store.create({ kind, task: { description: "falsy" }, background: false });
      const { view } = run.settle({ outcome: "succeeded", value });
      expect(view.output).toEqual({ finalAvailable: true, delivery: "inline", value });
      expect(store.view(run.runId).output).toEqual({ finalAvailable: true, delivery: "inline", value });
      const page = store.inspectSingle(run.runId, "final");
      expect(page.finalAvailable).toBe(true);
      expect(page.page.complete).toBe(true);
      const parsed = page.page.encoding === "json" ? (JSON.parse(page.page.text) as { result: unknown }).result : page.page.text;
      expect(parsed).toEqual(kind === "agent" && typeof value !== "string" ? JSON.stringify(value) : value);
    }
  });

  it("stores a schema-constrained agent answer as JSON text", () => {
    const run = store.create({ kind: "agent", task: { description: "structured" }, background: false });
    const { view } = run.settle({ outcome: "succeeded", value: { verdict: "pass", score: 0.9 }, structured: true });
    expect(view.output.value).toEqual({ verdict: "pass", score: 0.9 });
    const page = store.inspectSingle(run.runId, "final");
    expect(page.page).toMatchObject({ encoding: "text", text: '{"verdict":"pass","score":0.9}', complete: true });
  });

  it("never offers partial narration as the canonical value", () => {
    const run = store.create({ kind: "agent", task: { description: "narrates" }, background: false });
    run.appendOutput("I think the answer is");
    const { view } = run.settle({ outcome: "succeeded" });
    expect(view.output).toEqual({ finalAvailable: false, delivery: "none" });
    expect(store.inspectSingle(run.runId, "final")).toMatchObject({ finalAvailable: false, page: { text: "", complete: true } });
  });

  it("redacts a private key written to the output a line at a time, and only up to where its lines stop looking like a key's", () => {
    const run = store.create({ kind: "workflow", task: { description: "prints a key" }, background: false });
    const pieces = ["config:\n", "-----BEGIN EC PRIVATE KEY-----\n", "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oTkBqJ5Hq9QIoAoGCCqGSM49\n", "AwEHoUQDQgAE\n", "-----END EC PRIVATE KEY-----\n", "done\n"];
    const written = pieces.map((piece) => run.appendOutput(piece).text);
    expect(written).toEqual(["config:\n", REDACTED, REDACTED, REDACTED, `${REDACTED}\n`, "done\n"]);
    // An opening line a child only talks about: what it says next is its own.
    expect(["Keys start with -----BEGIN RSA PRIVATE KEY-----", "and that line is followed by base64."].map((piece) => run.appendOutput(piece).text)).toEqual([
      `Keys start with ${REDACTED}`,
      "and that line is followed by base64.",
    ]);
    run.settle({ outcome: "succeeded" });
  });

  it("measures after redaction and warns output_redacted when an inlined value changed", () => {
    const secret = `sk-${"a1".repeat(9000)}`; // 18 KB before redaction, a few bytes after
    expect(deliver(`key ${secret}`)).toEqual({ delivery: "inline", value: `key ${REDACTED}`, bytes: 16, redacted: true });
    const run = store.create({ kind: "agent", task: { description: "leaky" }, background: false });
    const settled = run.settle({ outcome: "succeeded", value: { note: `key ${secret}` } });
    expect(settled.view.output).toEqual({
      finalAvailable: true,
      delivery: "inline",
      value: { note: `key ${REDACTED}` },
      redacted: true,
    });
    expect(settled.warnings).toEqual(["output_redacted"]);

    const clean = store.create({ kind: "agent", task: { description: "clean" }, background: false });
    expect(clean.settle({ outcome: "succeeded", value: "fine" }).warnings).toEqual([]);

    const bigAndLeaky = store.create({ kind: "agent", task: { description: "big" }, background: false });
    const result = bigAndLeaky.settle({ outcome: "succeeded", value: `password=hunter22 ${"z".repeat(20_000)}` });
    expect(result.view.output.delivery).toBe("reference");
    expect(result.warnings).toEqual([]); // nothing inlined, so nothing inlined was changed
    expect(readFinal(bigAndLeaky.runId, 8192).raw.startsWith(`password=${REDACTED} zzz`)).toBe(true);
  });

  it("has no canonical value for undefined", () => {
    expect(deliver(undefined)).toEqual({ delivery: "none", redacted: false });
  });
});
