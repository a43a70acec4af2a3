/**
 * `flow run`'s live view on a terminal, read back through a terminal emulator (@xterm/headless) as
 * a person sees it. A workflow of thousands of children, or children described in wide characters,
 * must still fit the screen: what does not fit is counted, and the run's title and its running and
 * failed children stay in view.
 */
import { Writable } from "node:stream";
import xterm from "@xterm/headless";
import { afterEach, expect, test } from "vitest";
import type { ChildEntry } from "../../src/contract/child-entry.ts";
import { createProgressView, type ProgressView } from "../../src/command-line/progress.ts";

const ROWS = 12;

let view: ProgressView | undefined;
afterEach(() => view?.finished("end"));

/** A terminal of COLS × ROWS that `flow` writes its progress to, as it would to stderr. */
function terminal(COLS = 80) {
  const term = new xterm.Terminal({ cols: COLS, rows: ROWS, allowProposedApi: true, convertEol: true }) // a tty turns \n into \r\n;
  let pending = Promise.resolve();
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending = pending.then(() => new Promise<void>((resolve) => term.write(chunk.toString(), resolve)));
      done();
    },
  });
  Object.assign(stream, { isTTY: true, columns: COLS, rows: ROWS });
  /** The lines on screen, once everything written so far is drawn. */
  const screen = async (): Promise<string[]> => {
    await pending;
    const buffer = term.buffer.active;
    return Array.from({ length: ROWS }, (_, row) => buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? "");
  };
  return { stream: stream as unknown as NodeJS.WriteStream, screen };
}

test("10,000 children: the title, the running and failed children and a count of the rest stay on a 12-row screen", async () => {
  const { stream, screen } = terminal();
  view = createProgressView(stream);
  view.started("wf_0mx7000000_0000000001", "map (saved)");
  const now = Date.now();
  const children: ChildEntry[] = Array.from({ length: 10_000 }, (_, index) => ({
    index,
    runId: `ag_${index}`,
    description: `file ${index}`,
    status: index === 17 || index === 9_000 ? "running" : index === 42 ? "failed" : "succeeded",
    startedAt: now,
    ...(index === 42 ? { error: "model overloaded" } : {}),
  }));
  view.children(children);
  const shown = await screen();
  const text = shown.join("\n");
  expect(text).toContain("map (saved) · wf_0mx7000000_0000000001");
  expect(text).toMatch(/… file 17 /);
  expect(text).toMatch(/… file 9000 /);
  expect(text).toMatch(/✗ file 42 .*failed: model overloaded/);
  expect(text).toMatch(/… \d+ more children not shown/);
  expect(text).toMatch(/^ {2}(?=.*\b2 running\b)(?=.*\b9997 succeeded\b)(?=.*\b1 failed\b)/m);
});

test("children described in wide characters take one row each, within the width", async () => {
  const { stream, screen } = terminal();
  view = createProgressView(stream);
  view.started("wf_0mx7000000_0000000002", "review (saved)");
  const wide = "日本語のソースファイルを一つずつ読んで確認する";
  view.children([0, 1, 2].map((index) => ({ index, runId: `ag_${index}`, description: `${wide} ${index}`, status: "running", activity: `calling 読む ${"長い".repeat(40)}` })));
  const shown = await screen();
  expect(shown[0]).toContain("review (saved) · wf_0mx7000000_0000000002");
  // Each child is one row, right after the title: none spilled onto a second line.
  expect(shown.slice(1, 4).every((line) => line.startsWith("  … 日本語"))).toBe(true);
  expect(shown[4]).toBe("  3 running");
});

test("on a terminal narrower than 40 columns the rows are cut to its width, so the title stays on screen", async () => {
  const { stream, screen } = terminal(30);
  view = createProgressView(stream);
  view.started("wf_0mx7000000_0000000003", "map (saved)");
  const children: ChildEntry[] = Array.from({ length: 8 }, (_, index) => ({ index, runId: `ag_${index}`, description: `file ${index}`, status: "running", activity: "thinking" }));
  view.children(children);
  const shown = await screen();
  expect(shown[0]).toMatch(/^map \(saved\) · wf_0mx7000000_0…$/);
  expect(shown.slice(1, 9).every((line) => line.startsWith("  … file "))).toBe(true);
});
