/**
 * Resumes that must never pay twice or mix runs: a chain of resumes across sessions, two resumes
 * of one run, a nested run only its parent may resume, and a side-effecting
 * call pending inside a nested run.
 */
import { Type } from "@sinclair/typebox";
import { defineTool, type ExtensionFactory } from "@earendil-works/pi-coding-agent";
import { afterEach, expect, test } from "vitest";
import { childAnswers, childHangs, type Seen } from "../support/children.ts";
import { callForReceipt } from "../support/receipts.ts";
import { startPiSession, type PiSessionOptions, type PiTestSession } from "../support/pi-session.ts";
import { journalOf } from "../support/journals.ts";

const sessions: PiTestSession[] = [];
afterEach(async () => {
  for (const pi of sessions.splice(0).reverse()) await pi.dispose();
});

async function session(from?: PiTestSession, options: PiSessionOptions = {}): Promise<PiTestSession> {
  const pi = await startPiSession(from ? { ...options, cwd: from.cwd, env: { PI_FLOW_HOME: from.flowHome } } : options);
  sessions.push(pi);
  return pi;
}

const step = (name: string) => `(await agent({ role: "explorer", description: "${name}", prompt: "Do ${name}.", context: { mode: "none" } })).value`;

/** A child that hangs until its run is stopped, and a promise that it started. */
function hanging(): { started: Promise<void>; child: ReturnType<typeof childHangs> } {
  let resolve!: () => void;
  const started = new Promise<void>((r) => (resolve = r));
  return { started, child: childHangs(resolve) };
}

async function cancelled(pi: PiTestSession, runId: string): Promise<void> {
  await pi.callTool("external_runs", { action: "cancel", runIds: [runId] });
  await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
}

const THREE = `const a = ${step("one")}; const b = ${step("two")}; const c = ${step("three")}; return [a, b, c];`;

test("a resumed run resumed again in another session replays children of both earlier sessions", async () => {
  const first = await session();
  const h1 = hanging();
  const r1 = (await callForReceipt(first, "external_workflow", { script: THREE, background: true }, { children: [childAnswers("1"), h1.child] })).run!.runId;
  await h1.started;
  await first.shutdown();

  const second = await session(first);
  const h2 = hanging();
  const r2 = (await callForReceipt(second, "external_workflow", { resume: r1, background: true }, { children: [childAnswers("2"), h2.child] })).run!.runId;
  await h2.started;
  await cancelled(second, r2);

  const seen: Seen[] = [];
  const r3 = await callForReceipt(second, "external_workflow", { resume: r2 }, { children: [childAnswers("3", seen)] });
  expect(r3.run).toMatchObject({ state: { outcome: "succeeded" }, output: { value: ["1", "2", "3"] }, children: { replayed: 2, live: 1 } });
  expect(seen.map((request) => request.user)).toEqual([expect.stringContaining("Do three.")]);
});

test("a run is resumed once: a second resume, at once or later, is refused and names the run that continues it", async () => {
  const pi = await session();
  const h = hanging();
  const r1 = (await callForReceipt(pi, "external_workflow", { script: `return ${step("only")};`, background: true }, { children: [h.child] })).run!.runId;
  await h.started;
  await cancelled(pi, r1);

  const seen: Seen[] = [];
  const both = await pi.callToolsAtOnce(
    [
      { name: "external_workflow", args: { resume: r1, background: true } },
      { name: "external_workflow", args: { resume: r1, background: true } },
    ],
    { children: [childAnswers("a", seen), childAnswers("b", seen)] },
  );
  const receipts = both.map((result) => result.structuredContent as { ok: boolean; data: { run: { runId: string } | null }; error?: { code: string; message: string } });
  const accepted = receipts.filter((receipt) => receipt.ok);
  const refused = receipts.filter((receipt) => !receipt.ok);
  expect(accepted).toHaveLength(1);
  expect(refused).toHaveLength(1);
  expect(refused[0]!.error!.code).toBe("request_invalid");
  const r2 = accepted[0]!.data.run!.runId;
  await pi.callTool("external_runs", { action: "wait", runIds: [r2] });
  expect(seen).toHaveLength(1); // the unfinished child ran once

  const later = await callForReceipt(pi, "external_workflow", { resume: r1 });
  expect(later.receipt).toMatchObject({ ok: false, error: { code: "request_invalid" } });
  expect(later.receipt.error!.message).toContain(`already resumed by ${r2}`);
});

test("only its parent's resume resumes a nested run; another workflow asking is refused", async () => {
  const pi = await session();
  const inner = `const a = ${step("inner a")}; const b = ${step("inner b")}; return [a, b];`;
  const outer = `export const meta = { tools: ["external_workflow"] };\nconst r = await tools.external_workflow({ script: ${JSON.stringify(inner)} });\nreturn r.data.run.output.value;`;
  const h = hanging();
  const parent = (await callForReceipt(pi, "external_workflow", { script: outer, background: true }, { children: [childAnswers("A"), h.child] })).run!.runId;
  await h.started;
  await cancelled(pi, parent);
  const nested = (journalOf(pi.flowHome, parent).find((line) => line.t === "event" && line.name === "nested_run") as { data: { runId: string } }).data.runId;

  const rogue = `export const meta = { tools: ["external_workflow"] };\nconst r = await tools.external_workflow({ resume: ${JSON.stringify(nested)} });\nreturn r.ok ? "resumed" : r.error.code + ": " + r.error.message;`;
  const seen: Seen[] = [];
  const refused = await callForReceipt(pi, "external_workflow", { script: rogue }, { children: [childAnswers("B", seen)] });
  expect(refused.run!.output.value).toMatch(new RegExp(`^request_invalid: Run ${nested} was started by workflow ${parent}; resume that one`));
  expect(seen).toHaveLength(0);

  const resumed = await callForReceipt(pi, "external_workflow", { resume: parent }, { children: [childAnswers("B", seen)] });
  expect(resumed.run).toMatchObject({ state: { outcome: "succeeded" }, output: { value: ["A", "B"] } });
  expect(seen).toHaveLength(1);
});

/** A tool with side effects (no replay-safe annotation) that hangs on its first call until stopped. */
function stampTool(calls: string[], started: () => void): ExtensionFactory {
  return (pi) =>
    pi.registerTool(
      defineTool({
        name: "stamp",
        label: "stamp",
        description: "Stamps a document.",
        parameters: Type.Object({ n: Type.Number() }),
        async execute(_id, _params, signal) {
          calls.push("stamp");
          started();
          await new Promise<void>((resolve) => (signal?.aborted ? resolve() : signal?.addEventListener("abort", () => resolve(), { once: true })));
          throw new Error("stamp stopped");
        },
      }),
    );
}

test("a side-effecting call pending inside a nested run refuses the parent's resume before anything runs", async () => {
  const calls: string[] = [];
  let started!: () => void;
  const stamping = new Promise<void>((resolve) => (started = resolve));
  const pi = await session(undefined, { extensions: [stampTool(calls, started)] });
  const inner = `export const meta = { tools: ["stamp"] };\nreturn await tools.stamp({ n: 1 });`;
  const outer = `export const meta = { tools: ["external_workflow"] };\nconst n = await tools.external_workflow({ script: ${JSON.stringify(inner)} });\nreturn [n.ok, ${step("after")}];`;
  const run = (await callForReceipt(pi, "external_workflow", { script: outer, background: true })).run!.runId;
  await stamping;
  await cancelled(pi, run);

  const seen: Seen[] = [];
  const resumed = await callForReceipt(pi, "external_workflow", { resume: run }, { children: [childAnswers("AFTER", seen)] });
  expect(resumed.receipt).toMatchObject({ ok: false, error: { code: "request_invalid" } });
  expect(resumed.receipt.error!.message).toMatch(/tools\.stamp call 0 of run wf_\S+ started and never answered/);
  expect(calls).toEqual(["stamp"]);
  expect(seen).toHaveLength(0);
});
