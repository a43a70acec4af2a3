import { createHash } from "node:crypto";
import { appendFileSync, closeSync, openSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SinglePayload } from "../../src/runs/index.ts";
import { runFiles } from "../../src/runs/home.ts";
import { fileDocument, readPage } from "../../src/runs/read/paging.ts";
import { encodeCursor, type PageCursor } from "../../src/runs/read/cursor.ts";
import { openRunStore, type RunStore, type RunViewName } from "../../src/runs/index.ts";
import { RUN_VIEWS } from "../../src/contract/runs-schema.ts";
import { codeOf, sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
let store: RunStore;
sandboxPerTest((fresh, freshStore) => ((box = fresh), (store = freshStore)));

const MESSAGES = ["plain ascii", "accents: é à ü", "cjk: 数据处理", "emoji: 🚀🔥✓", "", "tail 🧪 end"];

/** Walk a cursor sequence; every page must respect the byte limit. */
function readAll(runId: string, view: RunViewName, limitBytes: number): { text: string; pages: SinglePayload[] } {
  const pages: SinglePayload[] = [];
  let text = "";
  let cursor: string | undefined;
  do {
    const page = store.inspectSingle(runId, view, cursor ? { limitBytes, cursor } : { limitBytes });
    expect(Buffer.byteLength(page.page.text, "utf8")).toBeLessThanOrEqual(limitBytes);
    pages.push(page);
    text += page.page.text;
    cursor = page.page.nextCursor;
  } while (cursor);
  return { text, pages };
}

describe("paging", () => {
  it("pages agent output and diagnostics as text, UTF-8 safe and lossless at every limit", () => {
    const run = store.create({ kind: "agent", task: { description: "pages" }, background: false });
    for (const m of MESSAGES) run.appendOutput(m);
    run.appendDiagnostic({ level: "info", message: "starting ✓", at: "2026-01-01T00:00:00.000Z" });
    run.appendDiagnostic({ level: "error", code: "E1", message: "boom 🚀", at: "2026-01-01T00:00:01.000Z" });
    run.settle({ outcome: "succeeded", value: "ok" });
    const expected = MESSAGES.join("\n");
    for (const limit of [4, 5, 7, 13, 64, 100_000]) {
      const { text, pages } = readAll(run.runId, "output", limit);
      expect(text).toBe(expected);
      expect(pages.every((p) => p.page.encoding === "text")).toBe(true);
      expect(pages.at(-1)?.page.complete).toBe(true);
      expect(pages.slice(0, -1).every((p) => !p.page.complete)).toBe(true);
    }
    expect(readAll(run.runId, "diagnostics", 9).text).toBe(
      "2026-01-01T00:00:00.000Z info: starting ✓\n2026-01-01T00:00:01.000Z error [E1]: boom 🚀",
    );
  });

  it("refuses a limit that cannot hold the next character instead of splitting it", () => {
    const run = store.create({ kind: "agent", task: { description: "emoji" }, background: false });
    run.appendOutput("🚀");
    expect(codeOf(() => store.inspectSingle(run.runId, "output", { limitBytes: 3 }))).toBe("page_too_small");
    // The refusal says how large a limit is enough.
    expect(() => store.inspectSingle(run.runId, "output", { limitBytes: 3 })).toThrow(/ask again with limitBytes 4 or more/);
    expect(store.inspectSingle(run.runId, "output", { limitBytes: 4 }).page.text).toBe("🚀");
  });

  it("pages every workflow view as JSON that parses once concatenated", () => {
    const run = store.create({
      kind: "workflow",
      task: { description: "wf ✓" },
      background: false,
      launch: { args: { target: "src/ é" } },
    });
    for (const m of MESSAGES) run.appendOutput(m);
    run.appendDiagnostic({ level: "warn", message: "child failed 数据" });
    run.setChildren({ count: 2, failed: 1 });
    run.settle({ outcome: "succeeded", value: { verdicts: ["pass", "fail 🚀"] } });
    for (const view of ["summary", "launch", "output", "diagnostics", "final"] as const) {
      const { text, pages } = readAll(run.runId, view, 7);
      expect(pages.every((p) => p.page.encoding === "json")).toBe(true);
      const parsed: unknown = JSON.parse(text);
      if (view === "output") expect((parsed as { text: string }[]).map((e) => e.text)).toEqual(MESSAGES);
      if (view === "diagnostics") expect(parsed).toMatchObject([{ level: "warn", message: "child failed 数据" }]);
      if (view === "final") expect(parsed).toEqual({ result: { verdicts: ["pass", "fail 🚀"] } });
      if (view === "summary") expect(parsed).toEqual(store.view(run.runId));
      if (view === "launch") expect(parsed).toEqual({ args: { target: "src/ é" } });
    }
  });

  it("uses json for every view of a workflow, the additions patch and calls included", () => {
    const run = store.create({ kind: "workflow", task: { description: "views" }, background: false });
    run.settle({ outcome: "succeeded", value: 1 });
    const encodings = RUN_VIEWS.filter((view) => view !== "summary").map((view) => [view, store.inspectSingle(run.runId, view).page.encoding]);
    expect(encodings).toEqual(RUN_VIEWS.filter((view) => view !== "summary").map((view) => [view, "json"]));
  });

  it("uses json for agent summary and launch, text for output, diagnostics and final", () => {
    const run = store.create({ kind: "agent", task: { description: "enc" }, background: false, launch: { model: "m" } });
    run.appendDiagnostic({ level: "info", message: "x" });
    run.settle({ outcome: "succeeded", value: "v" });
    const encodings = Object.fromEntries(
      (["summary", "launch", "output", "diagnostics", "final"] as const).map((v) => [
        v,
        store.inspectSingle(run.runId, v).page.encoding,
      ]),
    );
    expect(encodings).toEqual({ summary: "json", launch: "json", output: "text", diagnostics: "text", final: "text" });
  });

  it("leaves unavailable output empty and says so", () => {
    const run = store.create({ kind: "agent", task: { description: "lost" }, background: false });
    run.appendOutput("will be lost");
    run.settle({ outcome: "failed", error: { code: "failed", message: "x" } });
    rmSync(runFiles(store.scope, run.runId).output);
    const page = store.inspectSingle(run.runId, "output");
    expect(page).toMatchObject({ page: { text: "", complete: true }, outputStatus: "unavailable", finalAvailable: false });
  });

  it("a live run's logs grow under a cursor without going stale, and are not complete until it ends", () => {
    const run = store.create({ kind: "workflow", task: { description: "live" }, background: false });
    run.appendOutput("first");
    const one = store.inspectSingle(run.runId, "output", { limitBytes: 8 });
    expect(one.page.nextCursor).toBeDefined();
    run.appendOutput("second");
    let text = one.page.text;
    let cursor = one.page.nextCursor;
    let last = one;
    while (cursor) {
      last = store.inspectSingle(run.runId, "output", { limitBytes: 8, cursor });
      text += last.page.text;
      cursor = last.page.nextCursor;
    }
    expect(last.page.complete).toBe(false); // live: more may come
    expect((JSON.parse(text) as { text: string }[]).map((e) => e.text)).toEqual(["first", "second"]);
    run.settle({ outcome: "succeeded", value: 1 });
    expect(store.inspectSingle(run.runId, "output", { limitBytes: 100_000 }).page.complete).toBe(true);
  });

  describe("cursors", () => {
    function setup() {
      const a = store.create({ kind: "agent", task: { description: "a" }, background: false });
      a.appendOutput("x".repeat(100));
      a.settle({ outcome: "succeeded", value: "y".repeat(100) });
      const b = store.create({ kind: "agent", task: { description: "b" }, background: false });
      b.appendOutput("z".repeat(100));
      b.settle({ outcome: "succeeded", value: "w".repeat(100) });
      const cursor = store.inspectSingle(a.runId, "output", { limitBytes: 10 }).page.nextCursor as string;
      return { a: a.runId, b: b.runId, cursor };
    }

    it("are bound to run, view, scope and kind of listing: cursor_invalid otherwise", () => {
      const { a, b, cursor } = setup();
      expect(store.inspectSingle(a, "output", { limitBytes: 10, cursor }).page.text).toBe("x".repeat(10));
      expect(codeOf(() => store.inspectSingle(b, "output", { limitBytes: 10, cursor }))).toBe("cursor_invalid");
      expect(codeOf(() => store.inspectSingle(a, "final", { limitBytes: 10, cursor }))).toBe("cursor_invalid");
      expect(codeOf(() => store.inspectBatch([a], { cursor }))).toBe("cursor_invalid");
      expect(codeOf(() => store.list({ cursor }))).toBe("cursor_invalid");
      // Same run ID, another session's store: the cursor's scope does not match.
      const other = openRunStore({ home: box.home, cwd: box.project, sessionId: "session-b", registry: box.registry });
      expect(codeOf(() => other.inspectSingle(a, "output", { cursor }))).toBe("cursor_invalid");
    });

    it("reject malformed and edited tokens", () => {
      const { a, cursor } = setup();
      const flipped = cursor.slice(0, 20) + (cursor[20] === "A" ? "B" : "A") + cursor.slice(21);
      for (const bad of [
        "",
        "not a cursor",
        "abc",
        flipped,
        `${cursor}x`,
        "x".repeat(5000),
        Buffer.from('{"v":1}').toString("base64url"),
      ]) {
        expect(codeOf(() => store.inspectSingle(a, "output", { cursor: bad }))).toBe("cursor_invalid");
      }
    });

    it("pointing past the end of evidence that never changed are cursor_invalid, not stale", () => {
      const { a } = setup();
      for (const view of ["output", "final"] as const) {
        const real = store.inspectSingle(a, view, { limitBytes: 10 }).page.nextCursor as string;
        const { v: _v, ...page } = JSON.parse(Buffer.from(real, "base64url").subarray(8).toString("utf8")) as PageCursor & { v: number };
        for (const offset of [101, 2 ** 40]) {
          const forged = encodeCursor({ ...page, o: offset });
          // Restarting would not help: nothing changed, the cursor itself is wrong.
          expect(codeOf(() => store.inspectSingle(a, view, { cursor: forged }))).toBe("cursor_invalid");
        }
      }
    });

    it("from an older page format are cursor_stale", () => {
      const { a } = setup();
      const body = Buffer.from(JSON.stringify({ v: 0, k: "page", s: "x", r: a, w: "output", o: 0, f: "" }));
      const old = Buffer.concat([createHash("sha256").update(body).digest().subarray(0, 8), body]).toString("base64url");
      expect(codeOf(() => store.inspectSingle(a, "output", { cursor: old }))).toBe("cursor_stale");
    });

    it("are cursor_stale when the evidence changed under them", () => {
      const { a, cursor } = setup();
      const files = runFiles(store.scope, a);
      // Replaced (a new file under the same name).
      rmSync(files.output);
      writeFileSync(files.output, "x".repeat(100));
      expect(codeOf(() => store.inspectSingle(a, "output", { cursor }))).toBe("cursor_stale");

      // Truncated.
      const fresh = store.inspectSingle(a, "output", { limitBytes: 50 }).page.nextCursor as string;
      truncateSync(files.output, 10);
      expect(codeOf(() => store.inspectSingle(a, "output", { cursor: fresh }))).toBe("cursor_stale");

      // A summary that changed between pages (the run settled).
      const live = store.create({ kind: "agent", task: { description: "live" }, background: false });
      const summary = store.inspectSingle(live.runId, "summary", { limitBytes: 20 }).page.nextCursor as string;
      live.settle({ outcome: "succeeded", value: 1 });
      expect(codeOf(() => store.inspectSingle(live.runId, "summary", { cursor: summary }))).toBe("cursor_stale");
    });

    it("of a JSON log are cursor_stale when an append moved a closing bracket already served", () => {
      const run = store.create({ kind: "workflow", task: { description: "wf" }, background: false });
      run.appendOutput("a");
      const whole = store.inspectSingle(run.runId, "output").page.text; // [\n{...}\n]
      const size = Buffer.byteLength(whole);
      const cut = store.inspectSingle(run.runId, "output", { limitBytes: size - 1 }); // ends inside "\n]"
      run.appendOutput("b");
      expect(codeOf(() => store.inspectSingle(run.runId, "output", { cursor: cut.page.nextCursor as string }))).toBe(
        "cursor_stale",
      );
    });

    it("keep serving the final value after the owner process is gone", () => {
      const { a } = setup();
      const first = store.inspectSingle(a, "final", { limitBytes: 30 });
      const later = box.otherProcess();
      const next = later.inspectSingle(a, "final", { limitBytes: 1000, cursor: first.page.nextCursor as string });
      expect(first.page.text + next.page.text).toBe("y".repeat(100));
    });
  });

  it("reads a page at the end of a multi-gigabyte log without reading the log", () => {
    // Sparse: 3 GiB of logical size, no real disk use. Reading it whole would throw (too large for a Buffer/string).
    const path = join(box.root, "huge.log");
    closeSync(openSync(path, "w"));
    truncateSync(path, 3 * 1024 ** 3);
    appendFileSync(path, "the end ✓");
    const doc = fileDocument(path, { appendOnly: true });
    const page = readPage(doc, doc.size - 11, 64);
    expect(page).toEqual({ text: "the end ✓", nextOffset: doc.size, atEnd: true });
  });
});
