import { readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import { openRunStore, processRegistry, RunRegistry } from "../../src/runs/index.ts";
import { fauxAssistantMessage, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import type { RunView } from "../../src/contract/run-schema.ts";
import type { WaitPayload } from "../../src/orchestrator/session/wait.ts";
import type { BatchPayload, ListPayload, SinglePayload } from "../../src/runs/index.ts";
import { childAnswers, childAnswersWhenReleased, childHangs } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { schemaViolation } from "../support/schema.ts";

type View = RunView;
/** Every payload's fields, each optional: one test reads whichever its action returns. */
type Data = Partial<ListPayload> &
  Partial<Omit<BatchPayload, "mode">> &
  Partial<Omit<SinglePayload, "mode">> &
  Partial<Omit<WaitPayload, "mode">> & { mode?: string; status?: string; runId?: string };
type Envelope = { ok: boolean; action: string; data: Data; warnings: string[]; error?: { code: string; message: string } };

let pi: PiTestSession;
afterEach(() => pi?.dispose());

const output = TOOL_SCHEMAS.external_runs.output;
const worker = { role: "worker", description: "Do work", prompt: "Work.", context: { mode: "none" } };

async function runs(args: Record<string, unknown>) {
  const result = await pi.callTool("external_runs", args);
  const envelope = result.structuredContent as Envelope;
  expect(schemaViolation(output, envelope)).toBeNull();
  expect(result.isError).toBe(!envelope.ok);
  return { result, envelope };
}

async function finishedRun(answer: string): Promise<string> {
  const result = await pi.callTool("external_delegate", worker, { children: [childAnswers(answer)] });
  return (result.structuredContent as { data: { run: View } }).data.run.runId;
}

async function backgroundRun(step: FauxResponseStep): Promise<string> {
  const result = await pi.callTool("external_delegate", { ...worker, background: true }, { children: [step] });
  return (result.structuredContent as { data: { run: View } }).data.run.runId;
}

/** Resolves when a call of `toolName` reports progress (a wait does once it has claimed its runs). */
function waitingOn(toolName: string): Promise<void> {
  return new Promise((resolve) => {
    const unsubscribe = pi.session.subscribe((event) => {
      if (event.type === "tool_execution_update" && event.toolName === toolName) {
        unsubscribe();
        resolve();
      }
    });
  });
}

const completions = () => pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed");

describe("list and inspect", () => {
  test("list returns agent runs and workflows as two streams, newest first, with independent cursors", async () => {
    pi = await startPiSession();
    const ids = [await finishedRun("a"), await finishedRun("b"), await finishedRun("c")];
    const first = await runs({ action: "list", limit: 2 });
    expect(first.envelope.ok).toBe(true);
    expect(first.envelope.data.workflows).toEqual([]);
    expect(first.envelope.data.runs!.map((run: View) => run.runId)).toEqual([ids[2], ids[1]]);
    expect(first.envelope.data.nextCursor).toEqual(expect.any(String));
    const second = await runs({ action: "list", limit: 2, cursor: first.envelope.data.nextCursor });
    expect(second.envelope.data.runs!.map((run: View) => run.runId)).toEqual([ids[0]]);
    expect(first.result.text).toContain(ids[2]);
    const workflowIds: string[] = [];
    for (let index = 0; index < 3; index++) {
      const call = await pi.callTool("external_workflow", { script: "return 1;" });
      workflowIds.push((call.structuredContent as { data: { run: View } }).data.run.runId);
    }
    const both = await runs({ action: "list", limit: 2 });
    expect(both.envelope.data.runs!.map((run) => run.runId)).toEqual([ids[2], ids[1]]);
    expect(both.envelope.data.workflows!.map((run) => run.runId)).toEqual([workflowIds[2], workflowIds[1]]);
    const nextWorkflows = await runs({ action: "list", limit: 2, workflowCursor: both.envelope.data.nextWorkflowCursor });
    expect(nextWorkflows.envelope.data.workflows!.map((run) => run.runId)).toEqual([workflowIds[0]]);
    // The streams are independent: the runs stream started over, as no cursor was given for it.
    expect(nextWorkflows.envelope.data.runs!.map((run) => run.runId)).toEqual([ids[2], ids[1]]);
  });

  test("a list page's inline values spend limitBytes per stream; later rows deliver by reference, whole", async () => {
    pi = await startPiSession();
    // Five workflows, each returning a 10 KB value: inline alone (under 16 KiB), 50 KB together.
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      const call = await pi.callTool("external_workflow", { script: `return ${JSON.stringify("v".repeat(10_000) + index)};` });
      ids.push((call.structuredContent as { data: { run: View } }).data.run.runId);
    }
    const bounded = await runs({ action: "list", limitBytes: 25_000 });
    const rows = bounded.envelope.data.workflows!;
    expect(rows.map((row) => row.runId)).toEqual([...ids].reverse());
    expect(rows.map((row) => row.output.delivery)).toEqual(["inline", "inline", "reference", "reference", "reference"]);
    expect(rows[2]!.refs.final).toEqual({ action: "inspect", runIds: [ids[2]], view: "final" });
    expect(bounded.result.text.length).toBeLessThan(25_000 + 5_000);
    // The default budget is 32 KiB: three of the five values, and the page's text stays bounded too.
    const byDefault = await runs({ action: "list" });
    expect(byDefault.envelope.data.workflows!.filter((row) => row.output.delivery === "inline")).toHaveLength(3);
    // A value delivered by reference is whole through its ref.
    const final = await runs(rows[4]!.refs.final as Record<string, unknown>);
    expect((JSON.parse(final.envelope.data.page!.text) as { result: unknown }).result).toBe("v".repeat(10_000) + "0");
    const none = await runs({ action: "list", limitBytes: 1 });
    expect(none.envelope.data.workflows!.map((row) => row.output.delivery)).toEqual(Array(5).fill("reference"));
    // A failed run's error message (up to 8 KiB each) is cut in the page's text, which 500 rows of
    // would have filled with megabytes; the envelope keeps it whole, and the text says where to read it.
    const failed = await pi.callTool("external_workflow", { script: `throw new Error(${JSON.stringify("E".repeat(3_000))});` });
    const failedId = (failed.structuredContent as { data: { run: View } }).data.run.runId;
    const listed = await runs({ action: "list", limitBytes: 1 });
    const row = listed.envelope.data.workflows!.find((entry) => entry.runId === failedId)!;
    expect(row.state.error!.message.includes("E".repeat(3_000))).toBe(true);
    const errorLine = listed.result.text.split("\n").find((line) => line.startsWith("  error: "))!;
    expect(errorLine.length, errorLine.slice(0, 100)).toBeLessThan(700);
    expect(errorLine).toContain(`more characters: external_runs ${JSON.stringify({ action: "inspect", runIds: [failedId] })}`);
    const whole = await runs({ action: "inspect", runIds: [failedId] });
    expect(whole.result.text.includes("E".repeat(3_000))).toBe(true);
  });

  test("a workflow's JSON pages may split anywhere; one cursor sequence concatenates to the document", async () => {
    pi = await startPiSession();
    const value = { verdict: "ship it ✓", items: Array.from({ length: 20 }, (_, index) => `item ${index}`) };
    const result = await pi.callTool("external_workflow", { script: `return ${JSON.stringify(value)};` });
    const runId = (result.structuredContent as { data: { run: View } }).data.run.runId;
    let raw = "";
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await runs({ action: "inspect", runIds: [runId], view: "final", limitBytes: 16, ...(cursor ? { cursor } : {}) });
      expect(page.envelope.data.page!.encoding).toBe("json");
      raw += page.envelope.data.page!.text;
      cursor = page.envelope.data.page!.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThan(5);
    expect(JSON.parse(raw)).toEqual({ result: value });
  });

  test("list: a live run with no saved record comes first and counts against limit; its bookmark goes stale when it leaves the registry", async () => {
    pi = await startPiSession();
    const saved = [await finishedRun("a"), await finishedRun("b")];
    // A run of this session whose evidence is gone while it still runs (as when writes fail).
    const live = openRunStore({ home: pi.flowHome, cwd: pi.cwd, sessionId: pi.session.sessionId })
      .create({ kind: "agent", task: { description: "evidence lost" }, background: true });
    rmSync(dirname(findFile(pi.flowHome, live.runId, "journal.jsonl")), { recursive: true, force: true });
    const first = await runs({ action: "list", limit: 1 });
    expect(first.envelope.data.runs!.map((run) => [run.runId, run.live])).toEqual([[live.runId, true]]);
    const second = await runs({ action: "list", limit: 2, cursor: first.envelope.data.nextCursor });
    expect(second.envelope.data.runs!.map((run) => run.runId)).toEqual([saved[1], saved[0]]);
    live.settle({ outcome: "cancelled", error: { code: "cancelled", message: "stopped" } });
    processRegistry().release(live.runId);
    const stale = await runs({ action: "list", limit: 1, cursor: first.envelope.data.nextCursor });
    expect(stale.envelope).toMatchObject({ ok: false, data: null, error: { code: "cursor_stale" } });
  });

  test("a limitBytes past 2^53 is a whole number the schema accepts: every action serves it as its largest page, as wait does", async () => {
    pi = await startPiSession();
    const runId = await finishedRun("whole answer");
    const huge = 2 ** 60;
    const page = await runs({ action: "inspect", runIds: [runId], view: "final", limitBytes: huge });
    expect(page.envelope).toMatchObject({ ok: true, data: { page: { text: "whole answer", complete: true } } });
    const batch = await runs({ action: "inspect", runIds: [runId], limitBytes: huge });
    expect(batch.envelope).toMatchObject({ ok: true, data: { mode: "batch", entries: [{ runId }] } });
    const list = await runs({ action: "list", limitBytes: huge });
    expect(list.envelope).toMatchObject({ ok: true, data: { runs: [{ runId, output: { delivery: "inline", value: "whole answer" } }] } });
    const waited = await runs({ action: "wait", runIds: [runId], limitBytes: huge });
    expect(waited.envelope).toMatchObject({ ok: true, data: { completed: [{ runId }] } });
  });

  test("batch summary inspection pages by limitBytes in both channels and never drops a target", async () => {
    pi = await startPiSession();
    const ids = [await finishedRun("one"), await finishedRun("two"), await finishedRun("three")];
    const all = await runs({ action: "inspect", runIds: ids, view: "summary" });
    expect(all.envelope.data).toMatchObject({ mode: "batch" });
    expect(all.envelope.data.entries!.map((entry: View) => entry.runId)).toEqual(ids);
    const oneEntryBytes = Buffer.byteLength(JSON.stringify(all.envelope), "utf8") - 200;
    const served: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await runs({ action: "inspect", runIds: ids, view: "summary", limitBytes: Math.ceil(oneEntryBytes / 2), ...(cursor ? { cursor } : {}) });
      expect(Buffer.byteLength(page.result.text, "utf8")).toBeLessThanOrEqual(Math.ceil(oneEntryBytes / 2));
      served.push(...page.envelope.data.entries!.map((entry: View) => entry.runId));
      cursor = page.envelope.data.nextCursor;
    } while (cursor);
    expect(served).toEqual(ids);
    const tooSmall = await runs({ action: "inspect", runIds: ids, view: "summary", limitBytes: 40 });
    expect(tooSmall.envelope).toMatchObject({ ok: false, data: null, error: { code: "page_too_small" } });
  });

  test("single views: final as text, launch as JSON, output pages concatenate losslessly", async () => {
    pi = await startPiSession();
    const answer = "line one\nline two ✓";
    const runId = await finishedRun(answer);
    const final = await runs({ action: "inspect", runIds: [runId], view: "final" });
    expect(final.envelope.data).toMatchObject({ mode: "single", runId, view: "final", finalAvailable: true, page: { encoding: "text", complete: true, text: answer } });
    const launch = await runs({ action: "inspect", runIds: [runId], view: "launch" });
    expect(launch.envelope.data.page!.encoding).toBe("json");
    // The launch evidence names the Pi tool call that started the run, for correlation.
    expect(JSON.parse(launch.envelope.data.page!.text)).toMatchObject({ harness: "pi", toolCallId: expect.stringMatching(/^call_\d+$/) });
    let text = "";
    let cursor: string | undefined;
    do {
      const page = await runs({ action: "inspect", runIds: [runId], view: "output", limitBytes: 7, ...(cursor ? { cursor } : {}) });
      text += page.envelope.data.page!.text;
      cursor = page.envelope.data.page!.nextCursor;
    } while (cursor);
    expect(text).toContain(answer);
  });

  test("diagnostics list the child's tool calls; output a crashed run never wrote is unavailable, with a fallback only in content", async () => {
    pi = await startPiSession();
    const callsLs: FauxResponseStep = () => fauxAssistantMessage([fauxToolCall("ls", { path: "." })], { stopReason: "toolUse" });
    const result = await pi.callTool("external_delegate", worker, { children: [callsLs, childAnswers("listed")] });
    const runId = (result.structuredContent as { data: { run: View } }).data.run.runId;
    const diagnostics = await runs({ action: "inspect", runIds: [runId], view: "diagnostics" });
    expect(diagnostics.envelope.data).toMatchObject({ mode: "single", view: "diagnostics", page: { encoding: "text" }, outputStatus: "available" });
    expect(diagnostics.envelope.data.page!.text).toContain("tool ls");
    const crashed = openRunStore({ home: pi.flowHome, cwd: pi.cwd, sessionId: pi.session.sessionId, registry: new RunRegistry() })
      .create({ kind: "agent", task: { description: "crashed" }, background: true });
    const output = await runs({ action: "inspect", runIds: [crashed.runId], view: "output" });
    expect(output.envelope.data).toMatchObject({ page: { text: "" }, outputStatus: "unavailable" });
    expect(output.result.text).toContain(`Run ${crashed.runId} has no output evidence (unavailable)`);
  });

  test("a failed run's final is empty with finalAvailable false, never partial narration", async () => {
    pi = await startPiSession();
    const result = await pi.callTool("external_delegate", worker, { children: [childAnswers("  ")] });
    const runId = (result.structuredContent as { data: { run: View } }).data.run.runId;
    const final = await runs({ action: "inspect", runIds: [runId], view: "final" });
    expect(final.envelope.data).toMatchObject({ finalAvailable: false, page: { text: "" } });
    expect(final.result.text).toContain("finalAvailable: false");
  });
  test("a live run's final is not complete: no value yet, no cursor, and complete only once it settles", async () => {
    pi = await startPiSession();
    const gate = childAnswersWhenReleased("the answer");
    const runId = await backgroundRun(gate.step);
    await gate.started;
    const live = await runs({ action: "inspect", runIds: [runId], view: "final" });
    expect(live.envelope.data).toMatchObject({ mode: "single", finalAvailable: false, page: { text: "", complete: false } });
    expect(live.envelope.data.page!.nextCursor).toBeUndefined();
    expect(live.result.text).toBe(`Run ${runId} has no final result (finalAvailable: false) yet; the run is still going.`);
    gate.release();
    await runs({ action: "wait", runIds: [runId] });
    const settled = await runs({ action: "inspect", runIds: [runId], view: "final" });
    expect(settled.envelope.data).toMatchObject({ finalAvailable: true, page: { text: "the answer", complete: true } });
  });
});

describe("supervision errors", () => {
  test("bad IDs, target counts and views are request_invalid; unknown and foreign runs are run_unavailable", async () => {
    pi = await startPiSession();
    const runId = await finishedRun("mine");
    const cases: [Record<string, unknown>, string][] = [
      [{ action: "inspect", runIds: ["../../etc/passwd"], view: "final" }, "request_invalid"],
      [{ action: "inspect", runIds: [runId, runId], view: "summary" }, "request_invalid"],
      [{ action: "inspect", runIds: [runId, await finishedRun("other")], view: "final" }, "request_invalid"],
      [{ action: "cancel", runIds: [] }, "request_invalid"],
      [{ action: "list", runIds: [runId] }, "request_invalid"],
      [{ action: "inspect", runIds: [runId.replace(/.$/, (c) => (c === "a" ? "b" : "a"))], view: "final" }, "run_unavailable"],
      [{ action: "inspect", runIds: [runId], view: "final", cursor: "not-a-cursor" }, "cursor_invalid"],
    ];
    for (const [args, code] of cases) {
      const { envelope } = await runs(args);
      expect({ args, envelope: { ok: envelope.ok, data: envelope.data, code: envelope.error?.code } }).toEqual({ args, envelope: { ok: false, data: null, code } });
    }
    const other = await startPiSession();
    const foreign = await other.callTool("external_runs", { action: "inspect", runIds: [runId], view: "summary" });
    expect(foreign.structuredContent).toMatchObject({ ok: false, error: { code: "run_unavailable" } });
    await other.dispose();
  });

  test("a token pasted as a run ID is quoted back redacted whole, never its first 64 characters", async () => {
    pi = await startPiSession();
    // The first 64 characters of a JWT are no JWT to the redaction patterns: cut first, they would be quoted.
    const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    const { result, envelope } = await runs({ action: "inspect", runIds: [jwt] });
    expect(envelope).toMatchObject({ ok: false, error: { code: "request_invalid", message: expect.stringContaining('Malformed run ID "[REDACTED]"') } });
    expect(JSON.stringify(envelope)).not.toContain("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9");
    expect(result.text).not.toContain("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9");
  });

  test("a cursor from another run is cursor_invalid; evidence that changed under a cursor is cursor_stale", async () => {
    pi = await startPiSession();
    const a = await finishedRun("x".repeat(300));
    const b = await finishedRun("y".repeat(300));
    const page = await runs({ action: "inspect", runIds: [a], view: "launch", limitBytes: 32 });
    const cursor = page.envelope.data.page!.nextCursor as string;
    const foreign = await runs({ action: "inspect", runIds: [b], view: "launch", limitBytes: 32, cursor });
    expect(foreign.envelope.error?.code).toBe("cursor_invalid");
    // The launch details are the journal's start line.
    const journal = findFile(pi.flowHome, a, "journal.jsonl");
    writeFileSync(journal, readFileSync(journal, "utf8").replaceAll("worker", "WORKER"));
    const stale = await runs({ action: "inspect", runIds: [a], view: "launch", limitBytes: 32, cursor });
    expect(stale.envelope.error?.code).toBe("cursor_stale");
  });

  test("a run with no live owner and unfinished evidence is run_not_live for wait and cancel", async () => {
    pi = await startPiSession();
    // An owner in another process that died: its evidence stays unfinished and nothing here owns it.
    const crashed = openRunStore({ home: pi.flowHome, cwd: pi.cwd, sessionId: pi.session.sessionId, registry: new RunRegistry() })
      .create({ kind: "agent", task: { description: "crashed" }, background: true });
    const view = await runs({ action: "inspect", runIds: [crashed.runId], view: "summary" });
    expect(view.envelope.data.entries![0]!.state.status).toBe("interrupted_or_uncertain");
    for (const action of ["wait", "cancel"]) {
      const { envelope } = await runs({ action, runIds: [crashed.runId] });
      expect(envelope.error?.code).toBe("run_not_live");
    }
  });

  test("supervision needs a persisted session: session_unavailable", async () => {
    pi = await startPiSession({ persisted: false });
    const { envelope } = await runs({ action: "list" });
    expect(envelope).toMatchObject({ ok: false, data: null, error: { code: "session_unavailable" } });
  });
});

describe("wait, cancel and result ownership", () => {
  test("wait returns completed runs in request order, pending ones untouched, and consumes the completion", async () => {
    pi = await startPiSession();
    const fast = childAnswersWhenReleased("fast answer");
    const slow = childAnswersWhenReleased("slow answer");
    const first = await backgroundRun(fast.step);
    const second = await backgroundRun(slow.step);
    await Promise.all([fast.started, slow.started]);
    fast.release();
    const waited = await runs({ action: "wait", runIds: [second, first], mode: "any" });
    expect(waited.envelope.data).toMatchObject({ mode: "any", pending: [second] });
    expect(waited.envelope.data.completed).toMatchObject([{ runId: first, state: { outcome: "succeeded" }, output: { delivery: "inline", value: "fast answer" } }]);
    slow.release();
    const all = await runs({ action: "wait", runIds: [first, second] });
    expect(all.envelope.data.completed!.map((view: View) => view.runId)).toEqual([first, second]);
    expect(all.envelope.data.pending).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Both results were delivered by waits: no completion message is pushed for either.
    expect(completions()).toHaveLength(0);
  });

  test("wait any returns every target already finished when it is called: none is pending or called still running", async () => {
    pi = await startPiSession();
    const finished = [await finishedRun("one"), await finishedRun("two")];
    const workflow = await pi.callTool("external_workflow", { script: 'throw new Error("workflow broke");' });
    const failed = (workflow.structuredContent as { data: { run: View } }).data.run.runId;
    for (const request of [{ mode: "any", runIds: finished }, { mode: "all", runIds: [failed, ...finished] }]) {
      const waited = await runs({ action: "wait", ...request });
      expect(waited.envelope.data.completed!.map((view: View) => view.runId)).toEqual(request.runIds);
      expect(waited.envelope.data.pending).toEqual([]);
      expect(waited.result.text).not.toContain("Still running");
    }
  });

  test("a wait that times out leaves the run running; the completion is then pushed once", async () => {
    pi = await startPiSession();
    const gated = childAnswersWhenReleased("late answer");
    const runId = await backgroundRun(gated.step);
    await gated.started;
    const waited = await runs({ action: "wait", runIds: [runId], timeoutMs: 20 });
    expect(waited.envelope.data).toMatchObject({ completed: [], pending: [runId] });
    expect(waited.result.text).toContain("not cancelled");
    gated.release();
    await expect.poll(() => completions().length).toBe(1);
  });

  test("17.1: waiter A times out, waiter B receives the result: ownership stays claimed, no duplicate message", async () => {
    pi = await startPiSession();
    const gated = childAnswersWhenReleased("shared answer");
    const runId = await backgroundRun(gated.step);
    await gated.started;
    // Release the run only once both waits are running and A has given up.
    let waitsStarted = 0;
    let waitsEnded = 0;
    const unsubscribe = pi.session.subscribe((event) => {
      if (event.type === "tool_execution_start" && event.toolName === "external_runs") waitsStarted++;
      if (event.type === "tool_execution_end" && event.toolName === "external_runs") waitsEnded++;
    });
    const both = pi.runCodemode(`
      const a = tools.external_runs({ action: "wait", runIds: [${JSON.stringify(runId)}], timeoutMs: 30 });
      const b = tools.external_runs({ action: "wait", runIds: [${JSON.stringify(runId)}] });
      const first = await a;
      return { a: first.data.pending, b: (await b).data.completed.map((run) => run.output.value) };`);
    await expect.poll(() => waitsStarted === 2 && waitsEnded === 1).toBe(true);
    gated.release();
    expect((await both).value).toEqual({ a: [runId], b: ["shared answer"] });
    unsubscribe();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(completions()).toHaveLength(0);
  });

  test("an aborted wait throws 'Run wait aborted' and never cancels the run; its completion is recovered once", async () => {
    pi = await startPiSession();
    const gated = childAnswersWhenReleased("still delivered");
    const runId = await backgroundRun(gated.step);
    await gated.started;
    const started = waitingOn("external_runs");
    const waiting = pi.callTool("external_runs", { action: "wait", runIds: [runId] });
    await started;
    await pi.session.abort();
    const aborted = await waiting;
    expect(aborted.isError).toBe(true);
    expect(aborted.text).toContain("Run wait aborted");
    gated.release();
    await expect.poll(() => completions().length).toBe(1);
    expect((completions()[0] as unknown as { details: View }).details).toMatchObject({ runId, state: { outcome: "succeeded" } });
  });

  test("17.2: a wait on a queued run waits until it is dequeued, runs and completes", async () => {
    pi = await startPiSession({ env: { PI_FLOW_MAX_BACKGROUND: "1" } });
    const first = childAnswersWhenReleased("first");
    const firstId = await backgroundRun(first.step);
    await first.started;
    const queued = await pi.callTool("external_delegate", { ...worker, background: true }, { children: [childAnswers("second")] });
    const queuedRun = (queued.structuredContent as { data: { run: View } }).data.run;
    expect(queuedRun.state.status).toBe("queued");
    const started = waitingOn("external_runs");
    const waiting = pi.runCodemode(`return await tools.external_runs({ action: "wait", runIds: [${JSON.stringify(queuedRun.runId)}] });`);
    await started;
    first.release();
    const waited = (await waiting).value as Envelope;
    expect(waited.data.completed).toMatchObject([{ runId: queuedRun.runId, state: { outcome: "succeeded" }, output: { value: "second" } }]);
    expect(firstId).not.toBe(queuedRun.runId);
  });

  test("wait spends limitBytes in request order: runs whose text no longer fits are named, and by reference in both channels", async () => {
    pi = await startPiSession();
    const ids = [await backgroundRun(childAnswers("alpha")), await backgroundRun(childAnswers("beta")), await backgroundRun(childAnswers("gamma"))];
    await runs({ action: "wait", runIds: ids, timeoutMs: 5000 }); // let all three settle; this wait consumes them
    const first = await runs({ action: "wait", runIds: ids, limitBytes: 100_000 });
    const oneRunText = Buffer.byteLength(first.result.text, "utf8") / 3;
    const small = await runs({ action: "wait", runIds: ids, limitBytes: Math.ceil(oneRunText * 1.2) });
    const completed = small.envelope.data.completed!;
    expect(completed.map((view) => view.runId)).toEqual(ids);
    expect(completed[0]!.output).toMatchObject({ delivery: "inline", value: "alpha" });
    for (const view of completed.slice(1)) {
      expect(view.output.delivery).toBe("reference");
      expect(view.output.value).toBeUndefined();
    }
    expect(small.result.text).toContain("alpha");
    expect(small.result.text).not.toContain("beta");
    expect(small.result.text).toContain(`Also finished, over limitBytes for this text (see the structured result): ${ids[1]}, ${ids[2]}.`);
  });

  test("a run settled by another process is delivered by reference in both channels, never inlined from evidence", async () => {
    pi = await startPiSession();
    const other = openRunStore({ home: pi.flowHome, cwd: pi.cwd, sessionId: pi.session.sessionId, registry: new RunRegistry() });
    const writer = other.create({ kind: "agent", task: { description: "earlier" }, background: true });
    writer.settle({ outcome: "succeeded", value: "DURABLE-VALUE-XYZ" });
    const waited = await runs({ action: "wait", runIds: [writer.runId] });
    expect(waited.envelope.data.completed![0]!.output).toMatchObject({ delivery: "reference", finalAvailable: true });
    expect(waited.envelope.data.completed![0]!.output.value).toBeUndefined();
    expect(waited.result.text).not.toContain("DURABLE-VALUE-XYZ");
    expect(waited.result.text).toContain("by reference");
  });

  test("wait returns early when a workflow ends unsuccessfully, leaving the other runs pending", async () => {
    pi = await startPiSession();
    const slow = await backgroundRun(childHangs());
    const workflow = await pi.callTool("external_workflow", { script: 'throw new Error("workflow broke");', background: true });
    const workflowId = (workflow.structuredContent as { data: { run: View } }).data.run.runId;
    const waited = await runs({ action: "wait", runIds: [slow, workflowId], mode: "all" });
    expect(waited.envelope.data.pending).toEqual([slow]);
    expect(waited.envelope.data.completed).toMatchObject([{ runId: workflowId, kind: "workflow", state: { outcome: "failed" } }]);
    await runs({ action: "cancel", runIds: [slow] });
    // A model learns it before it waits: the tool's description says so.
    const description = pi.session.getAllTools().find((tool) => tool.name === "external_runs")?.description ?? "";
    expect(description).toMatch(/wait: [^.]*returns early when a workflow target ends unsuccessfully/);
  });

  test("cancelling a queued background run ends it cancelled before it ever runs, and frees nothing it never took", async () => {
    pi = await startPiSession({ env: { PI_FLOW_MAX_BACKGROUND: "1" } });
    const first = childAnswersWhenReleased("first");
    const firstId = await backgroundRun(first.step);
    await first.started;
    const queued = await pi.callTool("external_delegate", { ...worker, background: true }, { children: [childAnswers("never asked")] });
    const queuedId = (queued.structuredContent as { data: { run: View } }).data.run.runId;
    expect((await runs({ action: "cancel", runIds: [queuedId] })).envelope.data).toEqual({ runId: queuedId, status: "requested" });
    const waited = await runs({ action: "wait", runIds: [queuedId] });
    expect(waited.envelope.data.completed![0]!).toMatchObject({
      state: { outcome: "cancelled", error: { message: expect.stringContaining("before it ran") } },
      output: { finalAvailable: false },
    });
    // The slot stayed with the first run, which still finishes normally.
    first.release();
    const done = await runs({ action: "wait", runIds: [firstId] });
    expect(done.envelope.data.completed![0]!.output.value).toBe("first");
  });

  test("a workflow's wait that names its own run, or the workflow waiting on it, is request_invalid at once instead of waiting for itself; a background nested workflow may wait for its parent", async () => {
    pi = await startPiSession();
    // A script that waits for every live workflow names itself; a nested one names its parent, which waits on it.
    // Started in the background, the nested one is not waited on: its wait for the parent returns once the parent ends.
    const waitOnLive = (pick: string) =>
      [
        "const listed = await tools.external_runs({ action: \"list\" });",
        "const live = listed.data.workflows.filter((run) => run.live);",
        `const runIds = ${pick};`,
        "const waited = await tools.external_runs({ action: \"wait\", runIds });",
        "return { runIds, ok: waited.ok, code: waited.error?.code, message: waited.error?.message };",
      ].join("\n");
    const own = await pi.callTool("external_workflow", { script: waitOnLive("live.map((run) => run.runId)") });
    const ownRun = (own.structuredContent as { data: { run: View } }).data.run;
    expect(ownRun.output.value).toEqual({ runIds: [ownRun.runId], ok: false, code: "request_invalid", message: expect.stringContaining(`${ownRun.runId}, this workflow's own run`) });
    const inner = waitOnLive("live.filter((run) => run.task.parentRunId).map((run) => run.task.parentRunId)");
    const outer = ['export const meta = { tools: ["external_workflow"] };', `const nested = await tools.external_workflow({ script: ${JSON.stringify(inner)} });`, "return nested.data.run.output.value;"].join("\n");
    const parent = await pi.callTool("external_workflow", { script: outer });
    const parentRun = (parent.structuredContent as { data: { run: View } }).data.run;
    expect(parentRun.output.value).toEqual({ runIds: [parentRun.runId], ok: false, code: "request_invalid", message: expect.stringContaining(`${parentRun.runId}, a workflow whose foreground tools.external_workflow call waits on`) });
    const launcher = ['export const meta = { tools: ["external_workflow"] };', `const nested = await tools.external_workflow({ script: ${JSON.stringify(inner)}, background: true });`, "return nested.data.run.runId;"].join("\n");
    const launched = (await pi.callTool("external_workflow", { script: launcher })).structuredContent as { data: { run: View } };
    const nestedId = launched.data.run.output.value as string;
    const waited = await runs({ action: "wait", runIds: [nestedId] });
    expect(waited.envelope.data.completed![0]!.output.value).toEqual({ runIds: [launched.data.run.runId], ok: true });
    await pi.shutdown();
  });

  test("two background workflows whose scripts wait on each other: the wait that would close the circle is request_invalid, and both settle", async () => {
    pi = await startPiSession();
    const waitFor = (other: string) =>
      [
        "const listed = await tools.external_runs({ action: \"list\" });",
        `const other = listed.data.workflows.find((run) => run.live && run.task.description === ${JSON.stringify(other)});`,
        "const waited = await tools.external_runs({ action: \"wait\", runIds: [other.runId] });",
        "return waited.ok ? \"waited\" : waited.error.message;",
      ].join("\n");
    // A looks for B only once its gated child answered, after B started (and B, finding A, waits on it).
    const gated = childAnswersWhenReleased("go");
    const gate = 'await agent({ role: "worker", description: "gate", prompt: "Go.", context: { mode: "none" } });';
    const launch = async (description: string, script: string, children: FauxResponseStep[] = []) =>
      ((await pi.callTool("external_workflow", { script, description, background: true }, { children })).structuredContent as { data: { run: View } }).data.run.runId;
    const a = await launch("circle A", `${gate}\n${waitFor("circle B")}`, [gated.step]);
    const b = await launch("circle B", waitFor("circle A"));
    await gated.started;
    gated.release();
    const settled = await runs({ action: "wait", runIds: [a, b] });
    const values = settled.envelope.data.completed!.map((run) => run.output.value as string);
    // Whichever waited first waits; the other's wait would have closed the circle.
    expect(values.filter((value) => value === "waited")).toHaveLength(1);
    expect(values.find((value) => value !== "waited")).toMatch(new RegExp(`^wait names (${a}|${b}), a workflow whose wait waits on (${a}|${b}): it cannot settle`));
    // The session closes as on quit, so the background roots' last evidence is written before the folder goes.
    await pi.shutdown();
  });

  test("cancel asks a live run to stop (requested), and a finished one is terminal; two cancels of one run in one message are both answered", async () => {
    pi = await startPiSession();
    const runId = await backgroundRun(childHangs());
    const cancelled = await runs({ action: "cancel", runIds: [runId] });
    expect(cancelled.envelope.data).toEqual({ runId, status: "requested" });
    const waited = await runs({ action: "wait", runIds: [runId] });
    expect(waited.envelope.data.completed![0]!.state.outcome).toBe("cancelled");
    const again = await runs({ action: "cancel", runIds: [runId] });
    expect(again.envelope.data).toEqual({ runId, status: "terminal" });
    // Two cancels of one run in one message (tool-calling §17, same resource): each is answered, the run ends cancelled once.
    const other = await backgroundRun(childHangs());
    const both = await pi.callToolsAtOnce([0, 1].map(() => ({ name: "external_runs", args: { action: "cancel", runIds: [other] } })));
    for (const answer of both) expect(answer.structuredContent).toMatchObject({ ok: true, data: { runId: other, status: expect.stringMatching(/^(requested|terminal)$/) } });
    expect(both.map((answer) => (answer.structuredContent as { data: { status: string } }).data.status)).toContain("requested");
    const settled = await runs({ action: "wait", runIds: [other] });
    expect(settled.envelope.data.completed).toMatchObject([{ runId: other, state: { outcome: "cancelled" } }]);
    // Published at most once: the run settled before the wait began, so its completion may have come already.
    expect(completions().filter((message) => (message as { content: string }).content.includes(other)).length).toBeLessThanOrEqual(1);
  });
});

function findFile(root: string, runId: string, name: string): string {
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.name === name && entry.parentPath.endsWith(runId)) return join(entry.parentPath, entry.name);
  }
  throw new Error(`${name} of ${runId} not found`);
}
