import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FlowError } from "../../src/contract/errors.ts";
import { openRunStore, resolveFlowHome } from "../../src/runs/index.ts";
import { runFiles } from "../../src/runs/home.ts";
import { codeOf, expectValidView, messageOf, sandboxPerTest, type Sandbox } from "./helpers.ts";

let box: Sandbox;
sandboxPerTest((fresh) => (box = fresh));

const task = { description: "Check the build", role: "worker", harness: "pi" };

describe("identity", () => {
  it("issues run IDs by kind and validates every input ID before it reaches a path", () => {
    const store = box.store();
    const agent = store.create({ kind: "agent", task, background: false });
    const workflow = store.create({
      kind: "workflow",
      task: { description: "wf", workflow: "review", source: "shipped" },
      background: true,
    });
    expect(agent.runId).toMatch(/^ag_[0-9a-z]{9}_[0-9a-z]{10}$/);
    expect(workflow.runId).toMatch(/^wf_/);
    expect(store.view(agent.runId).kind).toBe("agent");
    expect(store.view(workflow.runId).kind).toBe("workflow");

    for (const bad of ["../../etc/passwd", "ag_../x", "", "AG_0MX1XGA91_9ENZ3I6ET6", `${agent.runId}/..`, 42, null, undefined]) {
      expect(codeOf(() => store.view(bad))).toBe("request_invalid");
      expect(codeOf(() => store.inspectSingle(bad, "output"))).toBe("request_invalid");
      expect(codeOf(() => store.inspectBatch([agent.runId, bad]))).toBe("request_invalid");
      expect(codeOf(() => store.cancel(bad))).toBe("request_invalid");
      expect(codeOf(() => store.settled(bad))).toBe("request_invalid");
    }
  });

  it("rejects bad views, target counts and limits as request_invalid", () => {
    const store = box.store();
    const run = store.create({ kind: "agent", task, background: false });
    expect(codeOf(() => store.inspectSingle(run.runId, "journal"))).toBe("request_invalid");
    expect(codeOf(() => store.inspect({ runIds: [run.runId, run.runId], view: "summary" }))).toBe("request_invalid");
    expect(codeOf(() => store.inspect({ runIds: [], view: "summary" }))).toBe("request_invalid");
    const other = store.create({ kind: "agent", task, background: false });
    expect(codeOf(() => store.inspect({ runIds: [run.runId, other.runId], view: "final" }))).toBe("request_invalid");
    expect(codeOf(() => store.inspectSingle(run.runId, "output", { limitBytes: 0 }))).toBe("request_invalid");
    expect(codeOf(() => store.list({ limit: 0 }))).toBe("request_invalid");
  });
});

describe("the run view", () => {
  it("reports task identity, liveness, state, timing, integrity, output and refs, with no private details", () => {
    const store = box.store();
    const writer = store.create({
      kind: "agent",
      task,
      background: true,
      launch: { model: "anthropic/claude", cwd: box.project, prompt: "Run the build", env: { HOME: "/home/x" } },
    });
    const live = store.view(writer.runId);
    expectValidView(live);
    expect(live).toMatchObject({
      runId: writer.runId,
      kind: "agent",
      task,
      live: true,
      background: true,
      state: { status: "running", outcome: null },
      integrity: "incomplete",
      output: { finalAvailable: false, delivery: "none" },
      refs: { summary: { action: "inspect", runIds: [writer.runId], view: "summary" } },
    });
    expect(live.timing.endedAt).toBeUndefined();
    expect(live.refs.final).toBeUndefined();

    writer.appendDiagnostic({ level: "warn", message: "slow" });
    const { view } = writer.settle({ outcome: "succeeded", value: "Build is green.", usage: { turns: 3, inputTokens: 10 } });
    expectValidView(view);
    expect(view).toMatchObject({
      live: false,
      state: { status: "done", outcome: "succeeded" },
      integrity: "complete",
      output: { finalAvailable: true, delivery: "inline", value: "Build is green." },
      usage: { turns: 3, inputTokens: 10 },
    });
    expect(view.timing.durationMs).toBeGreaterThanOrEqual(0);
    expect(view.refs.final).toEqual({ action: "inspect", runIds: [writer.runId], view: "final" });
    expect(view.refs.diagnostics).toEqual({ action: "inspect", runIds: [writer.runId], view: "diagnostics" });
    const text = JSON.stringify(view) + store.text(writer.runId);
    for (const secret of [box.home, box.project, "anthropic/claude", "Run the build", "/home/x"])
      expect(text).not.toContain(secret);
    expect(store.view(writer.runId)).toEqual(view);
  });

  it("queued until the owner marks it running", () => {
    const store = box.store();
    const writer = store.create({ kind: "agent", task, background: true, status: "queued" });
    expect(store.view(writer.runId).state.status).toBe("queued");
    writer.markRunning();
    expect(store.view(writer.runId).state.status).toBe("running");
  });

  it.each(["failed", "cancelled", "timed_out"] as const)("settles %s with its error and no canonical value", (outcome) => {
    const store = box.store();
    const writer = store.create({ kind: "agent", task, background: false });
    writer.appendOutput("partial narration that is not a result");
    const { view } = writer.settle({ outcome, value: "ignored", error: { code: outcome, message: "it ended badly" } });
    expectValidView(view);
    expect(view.state).toEqual({ status: "done", outcome, error: { code: outcome, message: "it ended badly" } });
    expect(view.output).toEqual({ finalAvailable: false, delivery: "none" });
    expect(view.refs.final).toBeUndefined();
    const page = store.inspectSingle(writer.runId, "final");
    expect(page).toMatchObject({ finalAvailable: false, page: { text: "", complete: true } });
  });

  it("workflows report children.count and children.failed", () => {
    const store = box.store();
    const writer = store.create({
      kind: "workflow",
      task: { description: "wf", workflow: "inline", source: "inline" },
      background: false,
    });
    expect(store.view(writer.runId).children).toEqual({ count: 0 });
    writer.journal({ t: "child", childRunId: "ag_0mx1xga91_bbbbbbbbbb", outcome: "failed" });
    writer.setChildren({ count: 3, failed: 1 });
    expect(store.view(writer.runId).children).toEqual({ count: 3, failed: 1 });
    const { view } = writer.settle({ outcome: "succeeded", value: { ok: 1 } });
    expect(view.children).toEqual({ count: 3, failed: 1 });
    expect(store.view(writer.runId).children).toEqual({ count: 3, failed: 1 });
    const agent = store.create({ kind: "agent", task, background: false });
    expect(store.view(agent.runId).children).toBeUndefined();
  });

  it("an unfinished run with no live owner is interrupted_or_uncertain", () => {
    const store = box.store();
    const writer = store.create({ kind: "agent", task, background: false });
    writer.appendOutput("working…");
    // A new process: same files, empty registry.
    const later = box.otherProcess();
    const view = later.view(writer.runId);
    expectValidView(view);
    expect(view).toMatchObject({
      live: false,
      state: { status: "interrupted_or_uncertain", outcome: null },
      integrity: "incomplete",
    });
    expect(codeOf(() => later.settled(writer.runId))).toBe("run_not_live");
    expect(codeOf(() => later.cancel(writer.runId))).toBe("run_not_live");
  });
});

describe("storage and scope", () => {
  it("partitions by project and session; other sessions', other projects', unknown and pruned runs are indistinguishable", () => {
    const store = box.store("session-a");
    const mine = store.create({ kind: "agent", task, background: false });
    mine.settle({ outcome: "succeeded", value: "x" });
    const pruned = store.create({ kind: "agent", task, background: false });
    pruned.settle({ outcome: "succeeded", value: "y" });
    // What retention does: the evidence goes, and so does the in-memory copy.
    rmSync(runFiles(store.scope, pruned.runId).dir, { recursive: true });
    store.registry.release(pruned.runId);

    const otherProject = join(box.root, "other-project");
    mkdirSync(otherProject);
    const otherSession = box.store("session-b");
    const otherProjectStore = box.store("session-a", { cwd: otherProject });
    const unknown = "ag_0mx1xga91_zzzzzzzzzz";

    const message = (id: string) => messageOf(() => otherSession.view(id)).replace(id, "<id>");
    expect(codeOf(() => otherSession.view(mine.runId))).toBe("run_unavailable");
    expect(codeOf(() => otherProjectStore.view(mine.runId))).toBe("run_unavailable");
    expect(codeOf(() => store.view(unknown))).toBe("run_unavailable");
    expect(codeOf(() => store.view(pruned.runId))).toBe("run_unavailable");
    expect(message(mine.runId)).toBe(message(unknown));
    expect(messageOf(() => store.view(pruned.runId)).replace(pruned.runId, "<id>")).toBe(message(unknown));
    for (const action of [
      () => otherSession.inspectSingle(mine.runId, "final"),
      () => otherSession.inspectBatch([mine.runId]),
      () => otherSession.cancel(mine.runId),
      () => otherSession.settled(mine.runId),
    ]) {
      expect(codeOf(action)).toBe("run_unavailable");
    }
    expect(otherSession.list().runs).toEqual([]);
    expect(otherProjectStore.list().runs).toEqual([]);
  });

  it("maps a symlinked cwd to the same project", () => {
    const link = join(box.root, "link");
    symlinkSync(box.project, link);
    const writer = box.store().create({ kind: "agent", task, background: false });
    expect(box.store("session-a", { cwd: link }).view(writer.runId).runId).toBe(writer.runId);
  });

  it("resolves the Flow home from PI_FLOW_HOME, else under Pi's agent directory", () => {
    expect(resolveFlowHome({ PI_FLOW_HOME: "/tmp/flow-home" }, "/home/u/.pi/agent")).toBe("/tmp/flow-home");
    expect(resolveFlowHome({}, "/home/u/.pi/agent")).toBe("/home/u/.pi/agent/flow");
    expect(resolveFlowHome({ PI_FLOW_HOME: "  " }, "/a")).toBe("/a/flow");
  });

  it("fails creation with storage_unavailable when the journal cannot be written, and registers nothing", () => {
    writeFileSync(join(box.root, "not-a-dir"), "");
    const store = openRunStore({ home: join(box.root, "not-a-dir"), cwd: box.project, sessionId: "s", registry: box.registry });
    const error = (() => {
      try {
        store.create({ kind: "workflow", task, background: false });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(FlowError);
    expect((error as FlowError).code).toBe("storage_unavailable");
    expect((error as FlowError).message).not.toContain(box.root);
    expect(store.list()).toEqual({ runs: [], workflows: [] });
  });

  it("replaces records atomically and redacts durable records when written", async () => {
    const store = box.store();
    const writer = store.create({
      kind: "agent",
      task: { description: "deploy with token=ghp_" + "a".repeat(36) },
      background: false,
      launch: { env: { OPENAI_API_KEY: "sk-" + "b".repeat(40) } },
    });
    writer.appendOutput("got password=hunter22 from vault");
    writer.appendDiagnostic({ level: "error", message: "auth failed for https://bob:pa55word@host/x" });
    writer.journal({ t: "store", key: "creds", value: { apiKey: "abc-123-def" } });
    writer.setChildren({ count: 1 });
    writer.settle({ outcome: "failed", error: { code: "failed", message: "Bearer abcdefghij0123456789 rejected" } });
    await store.idle(); // the record is rewritten by the group commit
    const files = runFiles(store.scope, writer.runId);
    const names = readdirSync(files.dir);
    expect(names.filter((n) => n.startsWith(".tmp-"))).toEqual([]);
    const everything = names.map((n) => readFileSync(join(files.dir, n), "utf8")).join("\n");
    for (const secret of ["ghp_aaaa", "sk-bbbb", "hunter22", "pa55word", "abc-123-def", "abcdefghij0123456789"]) {
      expect(everything).not.toContain(secret);
    }
    expect(JSON.parse(readFileSync(files.record, "utf8"))).toMatchObject({
      runId: writer.runId,
      status: "done",
      outcome: "failed",
    });
  });
});

describe("settled results survive missing evidence", () => {
  it("keeps a settled result when the journal is gone or the record is gone", async () => {
    const store = box.store();
    const writer = store.create({ kind: "agent", task, background: false });
    writer.settle({ outcome: "succeeded", value: { answer: 42 }, structured: true });
    await store.idle();
    const files = runFiles(store.scope, writer.runId);
    const fresh = () => box.otherProcess();

    rmSync(files.journal);
    const noJournal = fresh().view(writer.runId);
    expect(noJournal).toMatchObject({
      state: { status: "done", outcome: "succeeded" },
      integrity: "unknown",
      output: { value: { answer: 42 } },
    });

    writeFileSync(files.journal, "{garbage\n{}\n");
    expect(fresh().view(writer.runId)).toMatchObject({ state: { outcome: "succeeded" }, integrity: "damaged" });
  });

  it("rebuilds a run from its journal when the record is missing (crash before the record)", async () => {
    const store = box.store();
    const writer = store.create({ kind: "workflow", task: { description: "wf" }, background: true });
    writer.settle({ outcome: "succeeded", value: [1, 2, 3] });
    await store.idle();
    const files = runFiles(store.scope, writer.runId);
    rmSync(files.record);
    const view = box.otherProcess().view(
      writer.runId,
    );
    expectValidView(view);
    expect(view).toMatchObject({
      task: { description: "wf" },
      background: true,
      state: { status: "done", outcome: "succeeded" },
      integrity: "complete",
      output: { finalAvailable: true, delivery: "inline", value: [1, 2, 3] },
    });
  });

  it("serves a settled value held in memory as final even if its file was never saved", () => {
    const store = box.store();
    const writer = store.create({ kind: "agent", task, background: false });
    const files = runFiles(store.scope, writer.runId);
    mkdirSync(files.final); // the final file cannot be written: a directory is in the way
    const big = "é".repeat(20_000);
    const result = writer.settle({ outcome: "succeeded", value: big });
    expect(result.evidenceErrors.join()).toMatch(/final/);
    expect(result.view.output).toMatchObject({ finalAvailable: true, delivery: "reference" });
    let text = "";
    let cursor: string | undefined;
    do {
      const page = store.inspectSingle(writer.runId, "final", cursor ? { limitBytes: 4096, cursor } : { limitBytes: 4096 });
      expect(page.finalAvailable).toBe(true);
      text += page.page.text;
      cursor = page.page.nextCursor;
    } while (cursor);
    expect(text).toBe(big);
    // A process that never held it in memory has no final to offer; the outcome still stands.
    const fresh = box.otherProcess();
    expect(fresh.view(writer.runId)).toMatchObject({
      state: { outcome: "succeeded" },
      output: { finalAvailable: false, delivery: "none" },
    });
    expect(existsSync(files.journal)).toBe(true);
  });
});

describe("evidence lost while a run is live", () => {
  it("keeps the settled result: settle still returns the view, and reads serve it from memory", () => {
    const store = box.store();
    const run = store.create({ kind: "agent", task: { description: "lost" }, background: true });
    rmSync(runFiles(store.scope, run.runId).dir, { recursive: true });
    const { view, evidenceErrors, warnings } = run.settle({ outcome: "succeeded", value: "kept in memory" });
    expect(view.state).toMatchObject({ status: "done", outcome: "succeeded" });
    expect(view.output).toMatchObject({ delivery: "inline", value: "kept in memory" });
    expect(evidenceErrors.length).toBeGreaterThan(0);
    expect(warnings).toContain("evidence_incomplete");
    expect(store.inspectSingle(run.runId, "final").page.text).toBe("kept in memory");
  });
});
