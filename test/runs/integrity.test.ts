import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { classifyJournalFile, classifyJournalText } from "../../src/runs/journal/integrity.ts";
import { sandboxPerTest, type Sandbox } from "./helpers.ts";

const RUN = "wf_0mx1xga91_9enz3i6et6";
const OTHER = "wf_0mx1xga91_aaaaaaaaaa";
const at = "2026-01-01T00:00:00.000Z";
const start = (runId = RUN, v = 1) =>
  JSON.stringify({ v, seq: 0, runId, at, t: "start", kind: "workflow", task: { description: "d" }, background: false });
const child = (seq: number, runId = RUN) =>
  JSON.stringify({ v: 1, seq, runId, at, t: "child", childRunId: "ag_0mx1xga91_bbbbbbbbbb" });
const store = (seq: number) => JSON.stringify({ v: 1, seq, runId: RUN, at, t: "store", key: "k", value: { n: seq } });
const terminal = (seq: number) => JSON.stringify({ v: 1, seq, runId: RUN, at, t: "terminal", outcome: "succeeded", endedAt: at });
const lines = (...l: string[]) => l.map((x) => `${x}\n`).join("");

describe("journal integrity", () => {
  it("complete: a start line and a terminal line, no bad line", () => {
    const r = classifyJournalText(lines(start(), child(1), store(2), terminal(3)), RUN);
    expect(r.integrity).toBe("complete");
    expect(r.terminal?.outcome).toBe("succeeded");
    expect(r.start?.task.description).toBe("d");
  });

  it("incomplete: no terminal line", () => {
    expect(classifyJournalText(lines(start(), child(1)), RUN).integrity).toBe("incomplete");
    expect(classifyJournalText(lines(start()), RUN).integrity).toBe("incomplete");
    expect(classifyJournalText("", RUN).integrity).toBe("incomplete");
  });

  it("incomplete: only the last line is torn", () => {
    const whole = lines(start(), child(1));
    expect(classifyJournalText(whole + store(2).slice(0, 20), RUN).integrity).toBe("incomplete");
    // A terminal line whose newline never made it is still an unfinished write.
    expect(classifyJournalText(whole + terminal(2), RUN).integrity).toBe("incomplete");
    // A torn start line: nothing but an unfinished write.
    expect(classifyJournalText(start().slice(0, 30), RUN).integrity).toBe("incomplete");
  });

  it("integrity rule: a start line, a terminal line and a torn last line are incomplete, and the settled outcome stays readable", () => {
    const r = classifyJournalText(lines(start(), terminal(1)) + store(2).slice(0, 20), RUN);
    expect(r).toMatchObject({ integrity: "incomplete", reason: "line 3 is torn" });
    expect(r.terminal?.outcome).toBe("succeeded");
    // A torn last line is an unfinished write whether or not its text happens to parse.
    const parses = classifyJournalText(lines(start(), terminal(1)) + child(2), RUN);
    expect(parses).toMatchObject({ integrity: "incomplete", reason: "line 3 is torn" });
    expect(parses.terminal?.outcome).toBe("succeeded");
  });

  it("damaged: a bad line with records after it", () => {
    expect(classifyJournalText(lines(start(), "{not json", child(2), terminal(3)), RUN).integrity).toBe("damaged");
    expect(classifyJournalText(lines(start(), store(1).slice(0, 15), terminal(2)), RUN).integrity).toBe("damaged");
    // A line out of sequence (a lost or duplicated write) is a bad line too.
    expect(classifyJournalText(lines(start(), child(1), child(1), terminal(3)), RUN).integrity).toBe("damaged");
    // Records after the terminal line.
    expect(classifyJournalText(lines(start(), terminal(1), child(2)), RUN).integrity).toBe("damaged");
    // A journal that does not begin with its start line.
    expect(classifyJournalText(lines(child(0), terminal(1)), RUN).integrity).toBe("damaged");
  });

  it("incomplete: a bad last line, whole or torn, has no record after it: there is just no terminal line", () => {
    // The contract: damaged is "a bad line with records after it"; a last line has none.
    expect(classifyJournalText(lines(child(0)), RUN)).toMatchObject({ integrity: "incomplete", reason: "line 1 is not a start line (the last line; no terminal line)" });
    expect(classifyJournalText(child(0), RUN).integrity).toBe("incomplete");
    expect(classifyJournalText(lines(start(), "{garbage"), RUN).integrity).toBe("incomplete");
    expect(classifyJournalText(lines(start(), ""), RUN).integrity).toBe("incomplete");
    expect(classifyJournalText(lines(start(), child(5)), RUN).integrity).toBe("incomplete");
    expect(classifyJournalText(lines(start(), start()), RUN).integrity).toBe("incomplete");
    expect(classifyJournalText(lines(start()) + child(1), RUN).integrity).toBe("incomplete");
    expect(classifyJournalText(`${lines(start())}{"v":1,"se`, RUN).integrity).toBe("incomplete");
  });

  it("damaged: a bad line with records after it", () => {
    expect(classifyJournalText(lines(child(0), terminal(1)), RUN)).toMatchObject({ integrity: "damaged", reason: "line 1 is not a start line" });
    expect(classifyJournalText(lines(start(), "{garbage", terminal(2)), RUN).integrity).toBe("damaged");
    expect(classifyJournalText(lines(start(), "", child(2)), RUN).integrity).toBe("damaged");
    expect(classifyJournalText(lines(start(), child(5), terminal(6)), RUN).integrity).toBe("damaged");
    expect(classifyJournalText(lines(start(), start(), terminal(2)), RUN).integrity).toBe("damaged");
  });

  it("damaged: the run ID does not match", () => {
    expect(classifyJournalText(lines(start(OTHER), terminal(1)), RUN).integrity).toBe("damaged");
    expect(classifyJournalText(lines(start(), child(1, OTHER), terminal(2)), RUN).integrity).toBe("damaged");
  });

  it("unknown: unsupported version", () => {
    const r = classifyJournalText(lines(start(RUN, 99), terminal(1)), RUN);
    expect(r.integrity).toBe("unknown");
    expect(r.reason).toMatch(/version/);
  });

  describe("files", () => {
    let box: Sandbox;
    sandboxPerTest((fresh) => (box = fresh));

    it("unknown: the journal is unreadable or missing", () => {
      expect(classifyJournalFile(join(box.root, "missing.jsonl"), RUN)).toMatchObject({ integrity: "unknown", unreadable: true });
      const dir = join(box.root, "dir.jsonl");
      mkdirSync(dir);
      expect(classifyJournalFile(dir, RUN).integrity).toBe("unknown");
      const file = join(box.root, "ok.jsonl");
      writeFileSync(file, lines(start(), terminal(1)));
      chmodSync(file, 0o644);
      expect(classifyJournalFile(file, RUN).integrity).toBe("complete");
    });
  });
});
