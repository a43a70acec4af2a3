/**
 * Resuming a workflow from its journal in real Pi sessions: a background run cancelled when the
 * user quits continues in a new session without paying again for the children that had finished.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { afterEach, expect, test } from "vitest";
import { childAnswers, childHangs, type Seen } from "../support/children.ts";
import { callForReceipt } from "../support/receipts.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { journalOf, runFileOf } from "../support/journals.ts";

const sessions: PiTestSession[] = [];
afterEach(async () => {
  // The first session owns the project folder: dispose it last.
  for (const pi of sessions.splice(0).reverse()) await pi.dispose();
});

async function session(from?: PiTestSession): Promise<PiTestSession> {
  const pi = await startPiSession(from ? { cwd: from.cwd, env: { PI_FLOW_HOME: from.flowHome } } : {});
  sessions.push(pi);
  return pi;
}

const THREE_STEPS = [
  'store("r", Math.random());',
  'store("t", Date.now());',
  "const out = [];",
  'for (const step of ["first", "second", "third"]) {',
  '  const r = await agent({ role: "explorer", description: step, prompt: "Do the " + step + " step.", context: { mode: "none" } });',
  "  out.push(r.value);",
  "}",
  'return { out, r: load("r"), t: load("t") };',
].join("\n");

test("a background run cancelled when the user quits resumes in a new session: finished children are not run again, a running one continues its session", async () => {
  const first = await session();
  writeFileSync(join(first.cwd, "notes.txt"), "marker-7781\n");
  let hanging!: () => void;
  const third = new Promise<void>((resolve) => (hanging = resolve));
  // The third child reads a file, then hangs on its next model request until the quit stops it.
  const readNotes = fauxAssistantMessage([fauxToolCall("read", { path: "notes.txt" })], { stopReason: "toolUse" });
  const accepted = await callForReceipt(first, "external_workflow", { script: THREE_STEPS, background: true }, {
    children: [childAnswers("one"), childAnswers("two"), readNotes, childHangs(hanging)],
  });
  const runId = accepted.run!.runId;
  await third;
  await first.shutdown(); // quit: the background run is cancelled with its running child

  const journal = journalOf(first.flowHome, runId);
  expect(journal.at(-1)).toMatchObject({ t: "terminal", outcome: "cancelled" });
  const stored = Object.fromEntries(journal.filter((line) => line.t === "store").map((line) => [line.key, line.value]));

  const second = await session(first);
  const seen: Seen[] = [];
  const { receipt, run } = await callForReceipt(second, "external_workflow", { resume: runId }, { children: [childAnswers("three", seen)] });
  expect(receipt.ok).toBe(true);
  // Only the child that had not finished asked the model again.
  expect(seen).toHaveLength(1);
  expect(seen[0]!.user).toContain("Do the third step.");
  // It continued the interrupted child's persisted session: what that child had read is still there.
  expect(seen[0]!.all).toContain("marker-7781");
  expect(run).toMatchObject({
    task: { resumedFrom: runId, workflow: "inline" },
    children: { count: 3, failed: 0, replayed: 2, live: 1 },
    output: { value: { out: ["one", "two", "three"], r: stored.r, t: stored.t } },
  });
  expect(run!.runId).not.toBe(runId);

  // inspect says what was replayed and what ran live.
  const inspected = await second.callTool("external_runs", { action: "inspect", runIds: [run!.runId] });
  expect(inspected.text).toContain(`resumed from ${runId}: 2 calls replayed from its journal, 1 ran live`);
});

test("a test's dispose ends its session as quit does: the background run it left is cancelled, its journal and record written whole before dispose resolves", async () => {
  const owner = await session();
  const pi = await session(owner); // not the folder's owner: the run's files stay to be read
  let hanging!: () => void;
  const started = new Promise<void>((resolve) => (hanging = resolve));
  const accepted = await callForReceipt(pi, "external_delegate", { role: "worker", description: "left running", prompt: "p", context: { mode: "none" }, background: true }, {
    children: [childHangs(hanging)],
  });
  const runId = accepted.run!.runId;
  await started;
  await pi.dispose();
  expect(journalOf(pi.flowHome, runId).at(-1)).toMatchObject({ t: "terminal", outcome: "cancelled" });
  const record = JSON.parse(readFileSync(runFileOf(pi.flowHome, runId, "record.json"), "utf8")) as Record<string, unknown>;
  expect(record).toMatchObject({ runId, status: "done", outcome: "cancelled", journal: { integrity: "complete" } });
});

test("a session disposed twice puts the environment back once: a session started in between keeps its variables", async () => {
  const owner = await session();
  const first = await startPiSession({ cwd: owner.cwd, env: { PI_FLOW_HOME: owner.flowHome, PI_FLOW_MAX_BACKGROUND: "3" } });
  await first.dispose();
  sessions.push(await startPiSession({ cwd: owner.cwd, env: { PI_FLOW_HOME: owner.flowHome, PI_FLOW_MAX_BACKGROUND: "5" } }));
  await first.dispose(); // a test's own dispose, then its afterEach's
  expect(process.env.PI_FLOW_MAX_BACKGROUND).toBe("5");
});

test("a nested workflow running at the interruption resumes with its parent, and only with it", async () => {
  const pi = await session();
  const inner = [
    'const a = await agent({ role: "explorer", description: "inner a", prompt: "Do inner a.", context: { mode: "none" } });',
    'const b = await agent({ role: "explorer", description: "inner b", prompt: "Do inner b.", context: { mode: "none" } });',
    "return [a.value, b.value];",
  ].join("\n");
  // The resumed parent still sees its tools' declarations (describeTool reads schemas, it is no call).
  const outer = `export const meta = { tools: ["external_workflow"] };\nconst described = await describeTool("external_workflow");\nconst receipt = await tools.external_workflow({ script: ${JSON.stringify(inner)} });\nreturn [...receipt.data.run.output.value, described.includes("resume")];`;
  let hanging!: () => void;
  const innerB = new Promise<void>((resolve) => (hanging = resolve));
  const parent = (await callForReceipt(pi, "external_workflow", { script: outer, background: true }, { children: [childAnswers("A"), childHangs(hanging)] })).run!.runId;
  await innerB;
  await pi.callTool("external_runs", { action: "cancel", runIds: [parent] });
  await pi.callTool("external_runs", { action: "wait", runIds: [parent] });
  const nested = journalOf(pi.flowHome, parent).find((line) => line.t === "event" && line.name === "nested_run") as { data: { index: number; runId: string } };
  expect(nested.data.index).toBe(0);

  const direct = await callForReceipt(pi, "external_workflow", { resume: nested.data.runId });
  expect(direct.receipt).toMatchObject({ ok: false, error: { code: "request_invalid" } });
  expect(direct.receipt.error!.message).toContain(`started by workflow ${parent}; resume that one`);

  const seen: Seen[] = [];
  const { run } = await callForReceipt(pi, "external_workflow", { resume: parent }, { children: [childAnswers("B", seen)] });
  expect(run).toMatchObject({ state: { outcome: "succeeded" }, output: { value: ["A", "B", true] }, children: { replayed: 0, live: 1 } });
  expect(seen.map((request) => request.user)).toEqual([expect.stringContaining("Do inner b.")]);
  // The nested run resumed too: a new run under the new parent, its first child answered from the journal.
  const resumedNested = journalOf(pi.flowHome, run!.runId).find((line) => line.t === "event" && line.name === "nested_run") as { data: { runId: string } };
  const view = await pi.callTool("external_runs", { action: "inspect", runIds: [resumedNested.data.runId] });
  expect(view.structuredContent).toMatchObject({
    data: { entries: [{ task: { resumedFrom: nested.data.runId, parentRunId: run!.runId }, children: { count: 2, replayed: 1, live: 1 } }] },
  });
});
