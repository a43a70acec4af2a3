/**
 * What a resume refuses, and why, in real Pi sessions: every refusal is typed and runs nothing.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { defineTool, type ExtensionFactory } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxText, type FauxResponseStep } from "@earendil-works/pi-ai";
import { afterEach, expect, test } from "vitest";
import { childAnswers, childHangs, childModelFails, type Seen } from "../support/children.ts";
import { callForReceipt } from "../support/receipts.ts";
import { hashArgs } from "../../src/orchestrator/workflow/call-identity.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

const sessions: PiTestSession[] = [];
const folders: string[] = [];
afterEach(async () => {
  for (const pi of sessions.splice(0).reverse()) await pi.dispose();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

async function session(options: Parameters<typeof startPiSession>[0] = {}): Promise<PiTestSession> {
  const pi = await startPiSession(options);
  sessions.push(pi);
  return pi;
}

const workflow = (pi: PiTestSession, args: Record<string, unknown>, children: FauxResponseStep[] = []) =>
  callForReceipt(pi, "external_workflow", args, { children });

const step = (name: string) => `await agent({ role: "explorer", description: "${name}", prompt: "Do ${name}.", context: { mode: "none" } })`;

/** Cancels a background run and waits until its journal says so. */
async function cancelled(pi: PiTestSession, runId: string): Promise<void> {
  await pi.callTool("external_runs", { action: "cancel", runIds: [runId] });
  const waited = await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
  expect(waited.structuredContent).toMatchObject({ data: { completed: [{ runId, state: { outcome: "cancelled" } }] } });
}

test("a run that succeeded returns its result and runs nothing again", async () => {
  const pi = await session();
  const done = await workflow(pi, { script: `return (${step("a")}).value;` }, [childAnswers("A")]);
  const seen: Seen[] = [];
  const again = await workflow(pi, { resume: done.run!.runId }, [childAnswers("never", seen)]);
  expect(again.receipt).toMatchObject({ ok: true, data: { run: { runId: done.run!.runId, output: { value: "A" } } } });
  expect(again.result.text).toContain("had already succeeded");
  expect(seen).toHaveLength(0);
});

test("a live run, an agent run, a failed run and a contradictory request are request_invalid; unknown and foreign runs run_unavailable", async () => {
  const pi = await session();
  let started!: () => void;
  const hanging = new Promise<void>((resolve) => (started = resolve));
  const live = await workflow(pi, { script: `return (${step("slow")}).value;`, background: true }, [childHangs(started)]);
  await hanging;
  const refused = async (args: Record<string, unknown>, code: string, message: RegExp) => {
    const { receipt } = await workflow(pi, args);
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code } });
    expect(receipt.error!.message).toMatch(message);
  };
  await refused({ resume: live.run!.runId }, "request_invalid", /still live/);
  await cancelled(pi, live.run!.runId);

  const agentRun = await callForReceipt(pi, "external_delegate", { role: "explorer", description: "d", prompt: "p", context: { mode: "none" } }, { children: [childAnswers("x")] });
  await refused({ resume: agentRun.run!.runId }, "request_invalid", /is an agent run/);
  const failed = await workflow(pi, { script: `return (${step("boom")}).value;` }, [childModelFails("provider exploded")]);
  await refused({ resume: failed.run!.runId }, "request_invalid", /failed; resuming it would replay the same failure/);
  await refused({ resume: live.run!.runId, script: "return 1;" }, "request_invalid", /give no workflow, script or args/);
  await refused({ resume: "wf_0000000000_notarunid" }, "request_invalid", /.+/);
  await refused({ resume: "wf_0mx1xga91_abcdefghij" }, "run_unavailable", /not a run of this project/);

  // Another project's run, in the same Flow home, is as unknown as a made-up one.
  const elsewhere = mkdtempSync(join(tmpdir(), "pi-flow-other-"));
  folders.push(elsewhere);
  const other = await session({ cwd: elsewhere, env: { PI_FLOW_HOME: pi.flowHome } });
  let otherStarted!: () => void;
  const otherHanging = new Promise<void>((resolve) => (otherStarted = resolve));
  const foreign = await workflow(other, { script: `return (${step("x")}).value;`, background: true }, [childHangs(otherStarted)]);
  await otherHanging;
  await cancelled(other, foreign.run!.runId);
  await refused({ resume: foreign.run!.runId }, "run_unavailable", /not a run of this project/);
});

test("a saved workflow edited since the run is script_invalid; restored, the run resumes", async () => {
  const pi = await session();
  const dir = join(pi.cwd, ".pi", "flow", "workflows");
  mkdirSync(dir, { recursive: true });
  const source = `export const apiVersion = 1;\nexport const meta = { name: "two" };\nconst a = ${step("a")};\nconst b = ${step("b")};\nreturn [a.value, b.value];\n`;
  writeFileSync(join(dir, "two.js"), source);
  let started!: () => void;
  const second = new Promise<void>((resolve) => (started = resolve));
  const run = await workflow(pi, { workflow: "two", background: true }, [childAnswers("A"), childHangs(started)]);
  await second;
  await cancelled(pi, run.run!.runId);

  writeFileSync(join(dir, "two.js"), source.replace('"Do b."', '"Do b differently."'));
  const edited = await workflow(pi, { resume: run.run!.runId });
  expect(edited.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "script_invalid" } });
  expect(edited.receipt.error!.message).toMatch(/saved workflow two \(project\) is not the source run .* ran: it changed since/);

  writeFileSync(join(dir, "two.js"), source);
  const seen: Seen[] = [];
  const resumed = await workflow(pi, { resume: run.run!.runId }, [childAnswers("B", seen)]);
  expect(resumed.run).toMatchObject({ state: { outcome: "succeeded" }, output: { value: ["A", "B"] }, children: { replayed: 1, live: 1 } });
  expect(seen.map((request) => request.user)).toEqual([expect.stringContaining("Do b.")]);
});

/** Tools for a workflow: `stamp` may act on the world, `peek` is annotated read-only. Each call hangs until its run stops, the first time. */
function toolsExtension(calls: string[], started: () => void): ExtensionFactory {
  const tool = (name: string, readOnly: boolean) =>
    defineTool({
      name,
      label: name,
      description: `${name} (test tool)`,
      parameters: Type.Object({ n: Type.Number() }),
      ...(readOnly ? { annotations: { readOnlyHint: true } } : {}),
      async execute(_id, params, signal) {
        calls.push(name);
        if (calls.length > 1) return { content: [{ type: "text", text: `${name} ${params.n} again` }], details: {} };
        started();
        await new Promise<void>((resolve) => (signal?.aborted ? resolve() : signal?.addEventListener("abort", () => resolve(), { once: true })));
        throw new Error(`${name} stopped`);
      },
    });
  return (pi) => {
    pi.registerTool(tool("stamp", false));
    pi.registerTool(tool("peek", true));
  };
}

test.each([
  ["stamp", "is refused: its call may already have acted", false],
  ["peek", "runs the call again: the tool is annotated read-only", true],
] as const)("a tools.%s call pending when the run stopped %s", async (name, _what, resumes) => {
  const calls: string[] = [];
  let started!: () => void;
  const toolStarted = new Promise<void>((resolve) => (started = resolve));
  const pi = await session({ extensions: [toolsExtension(calls, started)] });
  const script = `export const meta = { tools: ["${name}"] };\nconst a = ${step("a")};\nreturn [a.value, await tools.${name}({ n: 7 })];`;
  const run = await workflow(pi, { script, background: true }, [childAnswers("A")]);
  await toolStarted;
  await cancelled(pi, run.run!.runId);

  const resumed = await workflow(pi, { resume: run.run!.runId });
  if (!resumes) {
    expect(resumed.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
    expect(resumed.receipt.error!.message).toMatch(/tools\.stamp call 0 of run wf_\S+ started and never answered, and the tool is not safe to replay/);
    expect(calls).toEqual(["stamp"]);
    return;
  }
  expect(resumed.run).toMatchObject({ state: { outcome: "succeeded" }, output: { value: ["A", "peek 7 again"] }, children: { count: 1, replayed: 1, live: 1 } });
  expect(calls).toEqual(["peek", "peek"]);
});

test("a script that reacts to the order children settle in diverges on resume: the run fails naming the first different call", async () => {
  const pi = await session();
  // Child "a" answers only after child "b" has settled, so the original run saw b first.
  let releaseA!: () => void;
  const aReleased = new Promise<void>((resolve) => (releaseA = resolve));
  let askedB!: () => void;
  const bAsked = new Promise<void>((resolve) => (askedB = resolve));
  let finalStarted!: () => void;
  const finalAsked = new Promise<void>((resolve) => (finalStarted = resolve));
  const router: FauxResponseStep = async (context, options, state, model) => {
    const text = JSON.stringify(context.messages.filter((message) => message.role === "user"));
    if (text.includes("Answer a")) {
      await aReleased;
      return fauxAssistantMessage([fauxText("A")]);
    }
    if (text.includes("Answer b")) {
      askedB();
      return fauxAssistantMessage([fauxText("B")]);
    }
    if (text.includes("Summarize")) return fauxAssistantMessage([fauxText("summary")]);
    const hang = childHangs(finalStarted);
    return typeof hang === "function" ? hang(context, options, state, model) : hang;
  };
  const script = [
    "const order = [];",
    `await Promise.all(["a", "b"].map(async (name) => { const r = await agent({ role: "explorer", description: name, prompt: "Answer " + name + ".", context: { mode: "none" } }); order.push(r.value); }));`,
    'await agent({ role: "explorer", description: "summary", prompt: "Summarize " + order.join(","), context: { mode: "none" } });',
    `return (${step("final")}).value;`,
  ].join("\n");
  const run = await workflow(pi, { script, background: true }, [router, router, router, router]);
  const runId = run.run!.runId;
  // Release a once b's child has settled: b's child run of this workflow, waited on by its ID.
  await bAsked;
  const listed = await pi.callTool("external_runs", { action: "list" });
  const runs = (listed.structuredContent as { data: { runs: { runId: string; task: { description: string; parentRunId?: string } }[] } }).data.runs;
  const b = runs.find((child) => child.task.parentRunId === runId && child.task.description === "b")!;
  await pi.callTool("external_runs", { action: "wait", runIds: [b.runId] });
  releaseA();
  await finalAsked;
  await cancelled(pi, runId);

  const seen: Seen[] = [];
  const resumed = await workflow(pi, { resume: runId }, [childAnswers("never", seen)]);
  // Replay answers a and b in call order, so the summary's prompt now differs from the journal's.
  expect(resumed.receipt).toMatchObject({ ok: false, error: { code: "failed" }, data: { run: { state: { outcome: "failed" }, task: { resumedFrom: runId } } } });
  expect(resumed.receipt.error!.message).toMatch(/diverged from run .* at its agent\(\) call 2 \(explorer, "summary", args [0-9a-f]+\): the journal has agent\(\) call 2 \(explorer, "summary", args [0-9a-f]+\)/);
  expect(seen).toHaveLength(0);
});

/** A background workflow cancelled while its one child ran: a run to resume, and its journal's path. */
async function cancelledWithJournal(pi: PiTestSession): Promise<{ runId: string; journal: string }> {
  let started!: () => void;
  const hanging = new Promise<void>((resolve) => (started = resolve));
  const run = await workflow(pi, { script: `return (${step("slow")}).value;`, background: true }, [childHangs(started)]);
  await hanging;
  await cancelled(pi, run.run!.runId);
  return { runId: run.run!.runId, journal: findFile(pi.flowHome, run.run!.runId, "journal.jsonl") };
}

test("error codes: an unreadable journal on resume is run_unavailable, and nothing runs", async () => {
  const pi = await session();
  const { runId, journal } = await cancelledWithJournal(pi);
  // The journal becomes something no read can open as a file (the tests may run as root, so not a chmod).
  rmSync(journal);
  mkdirSync(journal);
  const seen: Seen[] = [];
  const { receipt } = await workflow(pi, { resume: runId }, [childAnswers("never", seen)]);
  expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "run_unavailable" } });
  expect(receipt.error!.message).toMatch(/journal/);
  expect(seen).toHaveLength(0);
});

/** The path of a run's evidence file under the Flow home. */
function findFile(dir: string, runId: string, name: string): string {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    if (entry.name === runId) return join(path, name);
    try {
      return findFile(path, runId, name);
    } catch {
      // not under this folder
    }
  }
  throw new Error(`no ${name} for ${runId}`);
}

test("a journal rewritten to hold a script over 1 MiB, its hash rewritten too, is request_invalid on resume, as a fresh script that size is, and nothing runs", async () => {
  const pi = await session();
  const { runId, journal } = await cancelledWithJournal(pi);
  const forged = `return (${step("forged")}).value;\n// ${"x".repeat(1024 * 1024)}`;
  type Line = { t: string; name?: string; launch?: { script: string }; data?: { scriptHash?: string } };
  const lines = readFileSync(journal, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as Line);
  for (const line of lines) {
    if (line.t === "start") line.launch!.script = forged;
    if (line.t === "event" && line.name === "replay") line.data!.scriptHash = hashArgs(forged);
  }
  writeFileSync(journal, lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
  const seen: Seen[] = [];
  const { receipt } = await workflow(pi, { resume: runId }, [childAnswers("never", seen)]);
  expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
  expect(receipt.error!.message).toMatch(/recorded script is over 1 MiB/);
  expect(seen).toHaveLength(0);
});

test("an external_runs steer that never answered is not sent again: the resume is request_invalid naming it, and nothing runs", async () => {
  const pi = await session();
  const { runId, journal } = await cancelledWithJournal(pi);
  // The journal as a run that had steered a child when it stopped would have it: the steer's call, no answer.
  type Line = { seq: number; t: string; at: string; runId: string; v: number };
  const lines = readFileSync(journal, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as Line);
  const terminal = lines.pop()!;
  const { v, at } = terminal;
  lines.push({ v, seq: lines.length, runId, at, t: "event", name: "tool_call", data: { index: 0, tool: "external_runs", argsHash: "0", action: "steer" } } as Line);
  lines.push({ ...terminal, seq: lines.length });
  writeFileSync(journal, lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
  const seen: Seen[] = [];
  const { receipt } = await workflow(pi, { resume: runId }, [childAnswers("never", seen)]);
  expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
  expect(receipt.error!.message).toContain(`tools.external_runs steer call 0 of run ${runId} started and never answered`);
  expect(seen).toHaveLength(0);
});

test("resuming a child still queued for a background slot is refused with advice that works: wait for it, never steer it (a steer would not reach it)", async () => {
  const pi = await session({ env: { PI_FLOW_MAX_BACKGROUND: "1" } });
  let started!: () => void;
  const hanging = new Promise<void>((resolve) => (started = resolve));
  const worker = { role: "worker", description: "d", prompt: "p", context: { mode: "none" } };
  const first = await callForReceipt(pi, "external_delegate", { ...worker, background: true }, { children: [childHangs(started)] });
  await hanging;
  const queued = await callForReceipt(pi, "external_delegate", { ...worker, background: true });
  const runId = queued.run!.runId;
  expect(queued.run!.state.status).toBe("queued");
  const seen: Seen[] = [];
  const refused = await callForReceipt(pi, "external_delegate", { ...worker, resume: runId }, { children: [childAnswers("never", seen)] });
  expect(refused.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
  expect(refused.receipt.error!.message).toBe(
    `Run ${runId} is still queued for a background slot and has not started: wait for it with external_runs ${JSON.stringify({ action: "wait", runIds: [runId] })}, then resume it.`,
  );
  expect(seen).toHaveLength(0);
  await cancelled(pi, runId);
  await cancelled(pi, first.run!.runId);
});
