import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { runFiles } from "../../src/runs/home.ts";
import type { RunStore } from "../../src/runs/index.ts";
import { expectValidView, sandboxPerTest, type Sandbox } from "./helpers.ts";

const WRITER = join(import.meta.dirname, "fixtures", "crash-writer.ts");

let box: Sandbox;
sandboxPerTest((fresh) => (box = fresh));

interface Killed {
  runId: string;
  /** Further runs the writer reported ("sibling <id>"). */
  siblings: string[];
  /** Last "wrote <n>" the writer reported before the kill; -1 if none. */
  lastWrote: number;
}

/** Start the writer, SIGKILL it once `until` matches a line it printed, and wait for it to die. */
function runAndKill(scenario: string, until: (line: string) => boolean): Promise<Killed> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, box.home, box.project, "session-a", scenario], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let runId = "";
    const siblings: string[] = [];
    let lastWrote = -1;
    let stderr = "";
    let killed = false;
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.startsWith("run ")) runId = line.slice(4);
      if (line.startsWith("sibling ")) siblings.push(line.slice(8));
      const wrote = /^wrote (\d+)$/.exec(line);
      if (wrote && !killed) lastWrote = Number(wrote[1]);
      if (!killed && until(line)) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL" && runId) resolve({ runId, siblings, lastWrote });
      else reject(new Error(`writer exited (${code ?? signal}) before the kill: ${stderr}`));
    });
  });
}

/** The next reader: a fresh process's view of the same home (nothing in its registry). */
const reader = (): RunStore =>
  box.otherProcess();

function readAll(store: RunStore, runId: string, view: "output" | "diagnostics"): string {
  let text = "";
  let cursor: string | undefined;
  do {
    const page = store.inspectSingle(runId, view, cursor ? { limitBytes: 65536, cursor } : { limitBytes: 65536 });
    text += page.page.text;
    cursor = page.page.nextCursor;
  } while (cursor);
  return text;
}

describe("crash safety (writer killed with SIGKILL)", () => {
  it("right after the start line: incomplete, interrupted, task identity intact", async () => {
    const { runId } = await runAndKill("after-start", (l) => l === "hanging");
    const store = reader();
    const view = store.view(runId);
    expectValidView(view);
    expect(view).toMatchObject({
      task: { description: "crash test", workflow: "inline", source: "inline" },
      background: true,
      live: false,
      state: { status: "interrupted_or_uncertain", outcome: null },
      integrity: "incomplete",
      output: { finalAvailable: false, delivery: "none" },
    });
    expect(store.list().workflows.map((w) => w.runId)).toEqual([runId]);
    expect(JSON.parse(store.inspectSingle(runId, "launch").page.text)).toEqual({ args: { n: 1 } });
  });

  it.each([3, 40, 250])(
    "while streaming (killed after write %i): incomplete, and nothing reported written is lost",
    async (threshold) => {
      const { runId, lastWrote } = await runAndKill("streaming", (l) => l === `wrote ${threshold}`);
      expect(lastWrote).toBeGreaterThanOrEqual(threshold);
      const store = reader();
      const view = store.view(runId);
      expectValidView(view);
      expect(view.integrity).toBe("incomplete");
      expect(view.state.status).toBe("interrupted_or_uncertain");

      const output = JSON.parse(readAll(store, runId, "output")) as { text: string }[];
      expect(output.length).toBeGreaterThanOrEqual(lastWrote + 1);
      output.slice(0, lastWrote + 1).forEach((entry, i) => expect(entry.text).toBe(`message ${i} ✓ ${"x".repeat(i % 300)}`));
      const diagnostics = JSON.parse(readAll(store, runId, "diagnostics")) as { message: string }[];
      expect(diagnostics.length).toBeGreaterThanOrEqual(Math.floor(lastWrote / 7) + 1);
      expect(view.children?.count).toBeGreaterThanOrEqual(Math.floor(lastWrote / 10));

      const files = runFiles(store.scope, runId);
      const journal = readFileSync(files.journal, "utf8").split("\n").filter(Boolean);
      expect(journal.length).toBeGreaterThanOrEqual(lastWrote + 2); // start + one store line per reported write
    },
  );

  it("with a torn last journal line: incomplete, every whole line kept", async () => {
    const { runId } = await runAndKill("torn", (l) => l === "hanging");
    const store = reader();
    const view = store.view(runId);
    expect(view.integrity).toBe("incomplete");
    expect(view.state.status).toBe("interrupted_or_uncertain");
    const lines = readFileSync(runFiles(store.scope, runId).journal, "utf8").split("\n");
    expect(lines.slice(0, 6).map((l) => (JSON.parse(l) as { t: string }).t)).toEqual([
      "start",
      "child",
      "child",
      "child",
      "child",
      "child",
    ]);
  });

  it("after the final value but before the terminal line: no terminal, so no result is claimed", async () => {
    const { runId } = await runAndKill("before-terminal", (l) => l === "hanging");
    const view = reader().view(runId);
    expect(view).toMatchObject({
      state: { status: "interrupted_or_uncertain", outcome: null },
      integrity: "incomplete",
      output: { finalAvailable: false, delivery: "none" },
      children: { count: 2, failed: 1 },
    });
  });

  it("after the terminal line but before the record: the journal's outcome and the final value stand", async () => {
    const { runId } = await runAndKill("before-record", (l) => l === "hanging");
    const store = reader();
    const view = store.view(runId);
    expectValidView(view);
    expect(view).toMatchObject({
      state: { status: "done", outcome: "succeeded" },
      integrity: "complete",
      output: { finalAvailable: true, delivery: "inline", value: { answer: "forty-two", list: [1, 2, 3] } },
      children: { count: 2, failed: 1 },
    });
    expect(view.timing.endedAt).toBeDefined();
    const final = store.inspectSingle(runId, "final");
    expect(JSON.parse(final.page.text)).toEqual({ result: { answer: "forty-two", list: [1, 2, 3] } });
    // The half-done record replacement left a temp file; readers ignore it.
    expect(readdirSync(runFiles(store.scope, runId).dir).some((n) => n.startsWith(".tmp-"))).toBe(true);
    expect(store.list().workflows.map((w) => w.runId)).toEqual([runId]);
  });

  it("runs that settled together, killed before their group commit ran: every one complete, done, with its value", async () => {
    const { runId, siblings } = await runAndKill("settled-together", (l) => l === "hanging");
    expect(siblings).toHaveLength(19);
    const store = reader();
    expect(store.view(runId)).toMatchObject({ state: { status: "done", outcome: "succeeded" }, integrity: "complete", output: { value: { n: 0 } } });
    siblings.forEach((id, index) => {
      const view = store.view(id);
      expectValidView(view);
      expect(view).toMatchObject({
        state: { status: "done", outcome: "succeeded" },
        integrity: "complete",
        output: { delivery: "inline", value: `answer ${index + 1}` },
      });
      expect(readAll(store, id, "output")).toContain(`answer ${index + 1}`);
    });
  });

  it("runs started together, killed before the group commit wrote their records: each listed, interrupted, its output kept", async () => {
    const { runId, siblings } = await runAndKill("created-together", (l) => l === "hanging");
    expect(siblings).toHaveLength(20);
    const store = reader();
    siblings.forEach((id, index) => {
      const view = store.view(id);
      expectValidView(view);
      expect(view).toMatchObject({
        task: { description: `started ${index + 1}` },
        background: true,
        state: { status: "interrupted_or_uncertain", outcome: null },
        integrity: "incomplete",
      });
      expect(readAll(store, id, "output")).toBe(`partial ${index + 1}`);
    });
    expect(store.list({ limit: 50 }).runs.map((r) => r.runId).sort()).toEqual([...siblings].sort());
    expect(store.list().workflows.map((w) => w.runId)).toEqual([runId]);
  });

  it("killed while a batch renames settled records into place: every run's outcome stands, no record is torn", async () => {
    const { runId, siblings } = await runAndKill("batch-in-flight", (l) => l === "hanging");
    expect(siblings).toHaveLength(4);
    const store = reader();
    siblings.forEach((id, index) => {
      expect(store.view(id)).toMatchObject({
        state: { status: "done", outcome: "succeeded" },
        integrity: "complete",
        output: { delivery: "inline", value: `answer ${index + 1}` },
      });
    });
    expect(store.view(runId).state.status).toBe("interrupted_or_uncertain");
    for (const id of [runId, ...siblings]) {
      const dir = runFiles(store.scope, id).dir;
      // A record is there whole or not at all; a half-done replacement is only a temp file.
      if (readdirSync(dir).includes("record.json")) expect(() => JSON.parse(readFileSync(join(dir, "record.json"), "utf8"))).not.toThrow();
    }
  });

  it("after settling: complete and done", async () => {
    const { runId } = await runAndKill("settled", (l) => l === "hanging");
    const view = reader().view(runId);
    expect(view).toMatchObject({
      state: { status: "done", outcome: "failed", error: { code: "failed", message: "child failed" } },
      integrity: "complete",
      live: false,
    });
  });
});
