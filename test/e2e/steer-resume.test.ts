import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { childAnswers, childAnswersWhenReleased, childHangs, type Seen } from "../support/children.ts";
import { runFileOf } from "../support/journals.ts";
import { startPiSession, type PiTestSession, type TurnScript } from "../support/pi-session.ts";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import { callForReceipt } from "../support/receipts.ts";
import { schemaViolation } from "../support/schema.ts";
import { reportCommand } from "../../src/command-line/runs-report.ts";

/** Steering a running pi child and resuming a settled one, in a real Pi session. */

let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
});
afterEach(() => pi.dispose());

const worker = { role: "worker", description: "Write notes", prompt: "Write the notes.", context: { mode: "none" } };
const delegate = (args: Record<string, unknown>, script: TurnScript = {}) => callForReceipt(pi, "external_delegate", args, script);
type RunsEnvelope = { ok: boolean; data: Record<string, unknown>; error?: { code: string; message: string } };
/** external_runs as the model calls it; every envelope, steer's included, satisfies the declared output schema. */
const runs = async (args: Record<string, unknown>): Promise<RunsEnvelope> => {
  const envelope = (await pi.callTool("external_runs", args)).structuredContent;
  expect(schemaViolation(TOOL_SCHEMAS.external_runs.output, envelope)).toBeNull();
  return envelope as RunsEnvelope;
};

/** The child's model answers only when released, then asks for one tool call. */
function gatedToolCall(): { step: FauxResponseStep; release(): void; started: Promise<void> } {
  const gate = childAnswersWhenReleased("unused");
  return {
    ...gate,
    step: async (...args) => {
      await (gate.step as (...a: typeof args) => Promise<unknown>)(...args);
      return fauxAssistantMessage([fauxToolCall("ls", { path: "." })], { stopReason: "toolUse" });
    },
  };
}

describe("external_runs steer", () => {
  test("a steer reaches a running child after its tool batch and before its next model request, never as an interrupt", async () => {
    const first = gatedToolCall();
    const seen: Seen[] = [];
    const { receipt } = await delegate({ ...worker, background: true }, { children: [first.step, childAnswers("notes written, docs checked", seen)] });
    const runId = receipt.data.run!.runId;
    await first.started;
    const steered = await runs({ action: "steer", runIds: [runId], message: "Also check the docs folder." });
    expect(steered).toMatchObject({ ok: true, data: { runId, status: "queued", held: false } });
    first.release();
    const waited = await runs({ action: "wait", runIds: [runId] });
    expect(waited).toMatchObject({ ok: true, data: { completed: [{ runId, state: { outcome: "succeeded" }, output: { value: "notes written, docs checked" } }] } });
    // The model request in progress was not interrupted: its tool call ran, then the steer came.
    expect(seen).toHaveLength(1);
    const transcript = seen[0]!.all;
    expect(transcript.indexOf("Also check the docs folder.")).toBeGreaterThan(transcript.indexOf("Write the notes."));
    const diagnostics = await runs({ action: "inspect", runIds: [runId], view: "diagnostics" });
    expect((diagnostics.data.page as { text: string }).text).toMatch(/info \[steer\]: steer queued for the child's next model request: Also check the docs folder\./);
    // The run report says the run was steered, beside its links to other runs.
    const report = join(pi.cwd, "steered-report.html");
    expect(await reportCommand([runId, "--out", report, "--cwd", pi.cwd])).toBe(0);
    expect(readFileSync(report, "utf8")).toMatch(/<p class="links">[^<]*steered 1 time<\/p>/);
  });

  test("a steer is the parent's words, never a command: text that starts with /skill: reaches the child as written, not expanded", async () => {
    // A skill of the user's, which the child's session loads like any Pi session.
    mkdirSync(join(pi.agentDir, "skills", "deploy"), { recursive: true });
    writeFileSync(join(pi.agentDir, "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Deploy the app.\n---\nSKILL-BODY: run the deploy script.\n");
    const first = gatedToolCall();
    const seen: Seen[] = [];
    const { receipt } = await delegate({ ...worker, background: true }, { children: [first.step, childAnswers("done", seen)] });
    const runId = receipt.data.run!.runId;
    await first.started;
    expect(await runs({ action: "steer", runIds: [runId], message: "/skill:deploy to staging, not production." })).toMatchObject({ ok: true, data: { status: "queued" } });
    first.release();
    await runs({ action: "wait", runIds: [runId] });
    expect(seen[0]!.all).toContain("/skill:deploy to staging, not production.");
    expect(seen[0]!.all).not.toContain("SKILL-BODY");
  });

  test("error codes keep their v1 meaning: a finished run answers status terminal, not run_not_live; an unknown one run_unavailable; a workflow request_invalid; a missing message request_invalid", async () => {
    const { receipt } = await delegate(worker, { children: [childAnswers("done")] });
    const runId = receipt.data.run!.runId;
    const finished = await pi.callTool("external_runs", { action: "steer", runIds: [runId], message: "more" });
    expect(schemaViolation(TOOL_SCHEMAS.external_runs.output, finished.structuredContent)).toBeNull();
    expect(finished.structuredContent).toMatchObject({ ok: true, data: { runId, status: "terminal", held: false } });
    expect(finished.text).toMatch(/not delivered.*resume/);
    const unknown = runId.replace(/.$/, (last) => (last === "0" ? "1" : "0"));
    expect(await runs({ action: "steer", runIds: [unknown], message: "more" })).toMatchObject({ ok: false, error: { code: "run_unavailable" } });
    expect(await runs({ action: "steer", runIds: [runId] })).toMatchObject({ ok: false, error: { code: "request_invalid" } });
    expect(await runs({ action: "steer", runIds: [runId, runId], message: "x" })).toMatchObject({ ok: false, error: { code: "request_invalid" } });
    expect(await runs({ action: "list", message: "x" })).toMatchObject({ ok: false, error: { code: "request_invalid" } });
    const flow = await callForReceipt(pi, "external_workflow", { script: "return 1;" });
    expect(await runs({ action: "steer", runIds: [flow.receipt.data.run!.runId], message: "x" })).toMatchObject({ ok: false, error: { code: "request_invalid" } });
  });

  test("a cancelled child reads no more steers: one it had not read is noted as not delivered, and one sent after the cancel answers terminal", async () => {
    let hanging!: () => void;
    const first = new Promise<void>((resolve) => (hanging = resolve));
    const started = await delegate({ ...worker, background: true }, { children: [childHangs(hanging)] });
    const runId = started.receipt.data.run!.runId;
    await first; // its first model request is in progress
    expect(await runs({ action: "steer", runIds: [runId], message: "Also check the docs folder." })).toMatchObject({ ok: true, data: { status: "queued", held: false } });
    await runs({ action: "cancel", runIds: [runId] });
    expect(await runs({ action: "steer", runIds: [runId], message: "And the tests." })).toMatchObject({ ok: true, data: { runId, status: "terminal", held: false } });
    await runs({ action: "wait", runIds: [runId] });
    const diagnostics = await runs({ action: "inspect", runIds: [runId], view: "diagnostics" });
    const text = JSON.stringify(diagnostics.data);
    expect(text).toContain("steer not delivered (the child was cancelled before it read it): Also check the docs folder.");
    expect(text).not.toContain("And the tests.");
  });

  test("a steer answered terminal while the run is still ending gives advice that works then: wait for it, then resume it", async () => {
    let hanging!: () => void;
    const first = new Promise<void>((resolve) => (hanging = resolve));
    const started = await delegate({ ...worker, background: true }, { children: [childHangs(hanging)] });
    const runId = started.receipt.data.run!.runId;
    await first;
    await runs({ action: "cancel", runIds: [runId] });
    // Cancel requested: the child's session has ended, and until the run has settled a resume is refused as live.
    const steered = await pi.callTool("external_runs", { action: "steer", runIds: [runId], message: "And the tests." });
    expect(steered.structuredContent).toMatchObject({ ok: true, data: { status: "terminal" } });
    expect(steered.text).toContain(JSON.stringify({ action: "wait", runIds: [runId] }));
    // Followed as written, in order.
    await runs({ action: "wait", runIds: [runId] });
    const resumed = await delegate({ ...worker, prompt: "Go on.", resume: runId }, { children: [childAnswers("Resumed.")] });
    expect(resumed.receipt).toMatchObject({ ok: true, data: { run: { output: { value: "Resumed." } } } });
  });

  test("a steer Pi took into the request its maxTurns quota stopped is noted as not delivered, naming the quota", async () => {
    const first = gatedToolCall();
    const seen: Seen[] = [];
    const { receipt } = await delegate({ ...worker, background: true, maxTurns: 1 }, { children: [first.step, childAnswers("never asked", seen)] });
    const runId = receipt.data.run!.runId;
    await first.started;
    expect(await runs({ action: "steer", runIds: [runId], message: "Also check the docs folder." })).toMatchObject({ ok: true, data: { status: "queued" } });
    first.release(); // its tool call runs, then Pi takes the steer into turn 2, which the quota stops
    await runs({ action: "wait", runIds: [runId] });
    expect(seen).toEqual([]); // no model request read it
    const diagnostics = await runs({ action: "inspect", runIds: [runId], view: "diagnostics" });
    const text = (diagnostics.data.page as { text: string }).text;
    expect(text).toContain("steer not delivered (the child ended failed before it read it: The child exceeded its quota maxTurns (1): it started turn 2 and was stopped.): Also check the docs folder.");
  });

  test("a background run queued for a slot has not started: status not_started, nothing delivered (not run_not_live: its owner is live), and the text says so", async () => {
    await pi.dispose();
    pi = await startPiSession({ env: { PI_FLOW_MAX_BACKGROUND: "1" } });
    const first = childAnswersWhenReleased("first");
    await delegate({ ...worker, background: true }, { children: [first.step] });
    await first.started;
    const queued = await delegate({ ...worker, background: true }, { children: [childAnswers("second")] });
    const runId = queued.receipt.data.run!.runId;
    const result = await pi.callTool("external_runs", { action: "steer", runIds: [runId], message: "hurry" });
    const answer = result.structuredContent as RunsEnvelope;
    expect(schemaViolation(TOOL_SCHEMAS.external_runs.output, answer)).toBeNull();
    expect(answer).toMatchObject({ ok: true, action: "steer" });
    expect(answer.data).toEqual({ runId, status: "not_started", held: false });
    // The model reads the text: it must not be told the message was queued for the child.
    expect(result.text).toBe(`Run ${runId} has not started: it waits for a background slot, so the message was not delivered. Steer it once it runs.`);
    // And the description the model chose the call from names the answer.
    expect(pi.session.getToolDefinition("external_runs")!.description).toContain("not_started (a background run still waiting for a slot");
    first.release();
    await runs({ action: "wait", runIds: [runId] });
  });
});

describe("external_delegate resume", () => {
  test("a settled pi child is continued with its whole history, in a run of its own", async () => {
    const first = await delegate(worker, { children: [childAnswers("Notes: alpha, beta.")] });
    const firstRunId = first.receipt.data.run!.runId;
    const seen: Seen[] = [];
    const second = await delegate(
      { ...worker, prompt: "Now add gamma.", resume: firstRunId },
      { children: [childAnswers("Notes: alpha, beta, gamma.", seen)] },
    );
    expect(second.receipt).toMatchObject({ ok: true, data: { run: { task: { harness: "pi" }, output: { value: "Notes: alpha, beta, gamma." } } } });
    expect(second.receipt.data.run!.runId).not.toBe(firstRunId);
    expect(seen[0]!.all).toContain("Write the notes.");
    expect(seen[0]!.all).toContain("Notes: alpha, beta.");
    expect(seen[0]!.all).toContain("Now add gamma.");
    // A run resumed from the resumed run sees all three turns.
    const seenThird: Seen[] = [];
    await delegate({ ...worker, prompt: "And delta.", resume: second.receipt.data.run!.runId }, { children: [childAnswers("ok", seenThird)] });
    expect(seenThird[0]!.all).toContain("Notes: alpha, beta, gamma.");
    expect(seenThird[0]!.all).toContain("Write the notes.");
  });

  test("a pi child's session is saved at each turn's end, in Pi's format: a child stuck in its second turn has its first on disk", async () => {
    writeFileSync(join(pi.cwd, "notes.txt"), "marker-4412\n");
    let hanging!: () => void;
    const second = new Promise<void>((resolve) => (hanging = resolve));
    const readNotes = fauxAssistantMessage([fauxToolCall("read", { path: "notes.txt" })], { stopReason: "toolUse" });
    const started = await delegate({ ...worker, background: true }, { children: [readNotes, childHangs(hanging)] });
    const runId = started.receipt.data.run!.runId;
    await second;
    // Read back by Pi itself, as a resume does: the prompt, the tool call and what it read.
    const file = runFileOf(pi.flowHome, runId, "session.jsonl");
    const saved = SessionManager.open(file).buildSessionContext().messages.map((message) => JSON.stringify(message)).join("\n");
    expect(saved).toContain("Write the notes.");
    expect(saved).toContain("marker-4412");
    await runs({ action: "cancel", runIds: [runId] });
    await runs({ action: "wait", runIds: [runId] });
    const lines = readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line) as { type: string });
    expect(lines[0]!.type).toBe("session");
    expect(lines.filter((line) => line.type === "message").length).toBeGreaterThanOrEqual(3);
  });

  test("a pi child stuck in its first turn already has its prompt in its session file", async () => {
    let hanging!: () => void;
    const first = new Promise<void>((resolve) => (hanging = resolve));
    const started = await delegate({ ...worker, background: true }, { children: [childHangs(hanging)] });
    const runId = started.receipt.data.run!.runId;
    await first;
    const saved = SessionManager.open(runFileOf(pi.flowHome, runId, "session.jsonl")).buildSessionContext().messages;
    expect(saved.map((message) => JSON.stringify(message)).join("\n")).toContain("Write the notes.");
    await runs({ action: "cancel", runIds: [runId] });
    await runs({ action: "wait", runIds: [runId] });
  });

  test("agent() takes resume: a workflow continues a settled child", async () => {
    const first = await delegate(worker, { children: [childAnswers("Notes: alpha.")] });
    const seen: Seen[] = [];
    const script = `const r = await agent({ role: "worker", prompt: "Add beta.", context: { mode: "none" }, resume: ${JSON.stringify(first.receipt.data.run!.runId)} });\nreturn r.value;`;
    const { receipt } = await callForReceipt(pi, "external_workflow", { script }, { children: [childAnswers("Notes: alpha, beta.", seen)] });
    expect(receipt).toMatchObject({ ok: true, data: { run: { output: { value: "Notes: alpha, beta." } } } });
    expect(seen[0]!.all).toContain("Notes: alpha.");
  });

  test("a live run is request_invalid (steer it), an unknown one run_unavailable, another harness request_invalid", async () => {
    const gate = childAnswersWhenReleased("later");
    const live = await delegate({ ...worker, background: true }, { children: [gate.step] });
    const liveId = live.receipt.data.run!.runId;
    await gate.started;
    const again = await delegate({ ...worker, resume: liveId });
    expect(again.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid", message: expect.stringContaining("steer") } });
    gate.release();
    await runs({ action: "wait", runIds: [liveId] });
    const unknown = liveId.replace(/.$/, (last) => (last === "0" ? "1" : "0"));
    expect((await delegate({ ...worker, resume: unknown })).receipt).toMatchObject({ ok: false, error: { code: "run_unavailable" } });
    expect((await delegate({ ...worker, harness: "claude", resume: liveId })).receipt).toMatchObject({ ok: false, error: { code: "request_invalid" } });
  });

  test("a run cancelled before its child started has nothing to resume", async () => {
    await pi.dispose();
    pi = await startPiSession({ env: { PI_FLOW_MAX_BACKGROUND: "1" } });
    const first = childAnswersWhenReleased("first");
    const running = await delegate({ ...worker, background: true }, { children: [first.step] });
    await first.started;
    const queued = await delegate({ ...worker, background: true });
    const runId = queued.receipt.data.run!.runId;
    await runs({ action: "cancel", runIds: [runId] });
    await runs({ action: "wait", runIds: [runId] });
    const again = await delegate({ ...worker, resume: runId });
    expect(again.receipt).toMatchObject({ ok: false, error: { code: "request_invalid", message: expect.stringContaining("kept no Pi session") } });
    first.release();
    await runs({ action: "wait", runIds: [running.receipt.data.run!.runId] });
  });
});


describe("steering is not an interrupt", () => {
  test("a steer sent while the child's tool runs waits for the tool to finish, then reaches the next model request", async () => {
    // The child's tool waits for a file the test writes: it is surely running while the steer is sent.
    const command = "touch started && while [ ! -f go ]; do sleep 0.05; done && echo tool-finished";
    const callsBash: FauxResponseStep = () => fauxAssistantMessage([fauxToolCall("bash", { command })], { stopReason: "toolUse" });
    const seen: Seen[] = [];
    const { receipt } = await delegate({ ...worker, background: true }, { children: [callsBash, childAnswers("done after steer", seen)] });
    const runId = receipt.data.run!.runId;
    await expect.poll(() => existsSync(join(pi.cwd, "started"))).toBe(true);
    expect(await runs({ action: "steer", runIds: [runId], message: "Then summarise." })).toMatchObject({ ok: true, data: { held: false } });
    writeFileSync(join(pi.cwd, "go"), "");
    expect(await runs({ action: "wait", runIds: [runId] })).toMatchObject({ ok: true, data: { completed: [{ state: { outcome: "succeeded" } }] } });
    const transcript = seen[0]!.all;
    // The tool ran to its end (its output is there), and the steer comes after its result.
    expect(transcript).toContain("tool-finished");
    expect(transcript.indexOf("Then summarise.")).toBeGreaterThan(transcript.indexOf("tool-finished"));
  });
});
