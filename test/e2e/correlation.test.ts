/**
 * One correlation ID per line of work, in a real Pi session with the faux model: a resumed agent run
 * and a resumed workflow carry the ID of the run they continue, in receipts, inspect and list, and
 * their spans carry the very ID their records keep.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { jsonSpans, startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.ts";
import type { PiTestSession } from "../support/pi-session.ts";

// Tracing is configured by the environment the process starts with: set it before pi-flow loads.
const receiver: OtlpReceiver = await startOtlpReceiver();
Object.assign(process.env, { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
const { startPiSession } = await import("../support/pi-session.ts");
const { childAnswers, childHangs } = await import("../support/children.ts");
const { callForReceipt } = await import("../support/receipts.ts");
const { flushTelemetry, telemetryReady } = await import("../../src/telemetry/index.ts");
const { reportCommand } = await import("../../src/command-line/runs-report.ts");

let pi: PiTestSession;
beforeAll(async () => {
  await telemetryReady();
  pi = await startPiSession();
});
afterAll(async () => {
  await pi.dispose();
  await receiver.close();
});

type Structured = { structuredContent: unknown };

/** The run report's HTML of one run, as `flow runs report --out` writes it. */
async function reportOf(runId: string): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), "pi-flow-report-")), "report.html");
  expect(await reportCommand([runId, "--out", file, "--cwd", pi.cwd])).toBe(0);
  return readFileSync(file, "utf8");
}
const dataOf = <T>(outcome: Structured): T => (outcome.structuredContent as { data: T }).data;

/** The summary view of one run, as `external_runs inspect` pages it. */
async function summary(runId: string): Promise<RunView> {
  const outcome = await pi.callTool("external_runs", { action: "inspect", runIds: [runId], view: "summary" });
  return dataOf<{ entries: RunView[] }>(outcome).entries[0]!;
}

/** The span each run's record names, by the correlation ID it carries. */
async function spanCorrelations(runIds: readonly string[]): Promise<Record<string, unknown>> {
  await flushTelemetry();
  const spans = jsonSpans(receiver.requests);
  return Object.fromEntries(runIds.map((runId) => [runId, spans.find((span) => span.attributes["pi_flow.run_id"] === runId)?.attributes["pi_flow.correlation_id"]]));
}

test("a delegated child resumed, and that run resumed again, keep the first run's correlation ID in receipts, inspect, list and spans", async () => {
  const delegate = (args: Record<string, unknown>, answer: string) =>
    callForReceipt(pi, "external_delegate", { role: "explorer", context: { mode: "none" }, ...args }, { children: [childAnswers(answer)] });
  const first = (await delegate({ description: "Count", prompt: "Count the files." }, "Twelve.")).run!;
  expect(first.correlationId).toBe(first.runId); // a fresh run starts its own line of work

  const second = (await delegate({ description: "Count again", prompt: "And now?", resume: first.runId }, "Still twelve.")).run!;
  const third = (await delegate({ description: "Once more", prompt: "And now?", resume: second.runId }, "Twelve, still.")).run!;
  expect(second).toMatchObject({ correlationId: first.runId, state: { outcome: "succeeded" } });
  expect(third).toMatchObject({ correlationId: first.runId, state: { outcome: "succeeded" } });
  expect(new Set([first.runId, second.runId, third.runId]).size).toBe(3);

  expect((await summary(third.runId)).correlationId).toBe(first.runId);
  const batch = await pi.callTool("external_runs", { action: "inspect", runIds: [first.runId, third.runId] });
  expect(dataOf<{ entries: RunView[] }>(batch).entries.map((view) => view.correlationId)).toEqual([first.runId, first.runId]);
  expect(batch.text).toContain(`correlationId: ${first.runId}`); // the resumed run's line says which line of work it continues
  const listed = dataOf<{ runs: RunView[] }>(await pi.callTool("external_runs", { action: "list" })).runs;
  const correlations = Object.fromEntries(listed.map((view) => [view.runId, view.correlationId]));
  expect(correlations).toMatchObject({ [first.runId]: first.runId, [second.runId]: first.runId, [third.runId]: first.runId });

  expect(await spanCorrelations([first.runId, second.runId, third.runId])).toEqual({ [first.runId]: first.runId, [second.runId]: first.runId, [third.runId]: first.runId });
  // The run report links a resumed child to the run whose conversation it continues.
  expect(await reportOf(third.runId)).toContain(`continues the conversation of <code>${second.runId}</code>`);
});

const step = (name: string) => `(await agent({ role: "explorer", description: "${name}", prompt: "Do ${name}.", context: { mode: "none" } })).value`;
const THREE = `const a = ${step("one")}; const b = ${step("two")}; const c = ${step("three")}; return [a, b, c];`;

/** A child that hangs until its run is stopped, and a promise that it started. */
function hanging(): { started: Promise<void>; child: ReturnType<typeof childHangs> } {
  let resolve!: () => void;
  const started = new Promise<void>((r) => (resolve = r));
  return { started, child: childHangs(resolve) };
}

async function cancelled(runId: string): Promise<void> {
  await pi.callTool("external_runs", { action: "cancel", runIds: [runId] });
  await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
}

test("a workflow cancelled, resumed, cancelled and resumed again: all three runs and their children share the first run's correlation ID, and so do their spans", async () => {
  const h1 = hanging();
  const w1 = (await callForReceipt(pi, "external_workflow", { script: THREE, background: true }, { children: [childAnswers("1"), h1.child] })).run!;
  expect(w1.correlationId).toBe(w1.runId);
  await h1.started;
  await cancelled(w1.runId);

  const h2 = hanging();
  const w2 = (await callForReceipt(pi, "external_workflow", { resume: w1.runId, background: true }, { children: [childAnswers("2"), h2.child] })).run!;
  expect(w2).toMatchObject({ correlationId: w1.runId, task: { resumedFrom: w1.runId } });
  await h2.started;
  await cancelled(w2.runId);

  const w3 = (await callForReceipt(pi, "external_workflow", { resume: w2.runId }, { children: [childAnswers("3")] })).run!;
  expect(w3).toMatchObject({ correlationId: w1.runId, task: { resumedFrom: w2.runId }, state: { outcome: "succeeded" }, output: { value: ["1", "2", "3"] } });

  for (const run of [w1, w2, w3]) expect((await summary(run.runId)).correlationId).toBe(w1.runId);

  // Every agent() child of the three runs is part of the same line of work.
  const parents = new Set([w1.runId, w2.runId, w3.runId]);
  const listed = dataOf<{ runs: RunView[] }>(await pi.callTool("external_runs", { action: "list", limit: 100 })).runs;
  const entries = listed.filter((run) => parents.has(run.task.parentRunId ?? ""));
  expect(entries.length).toBeGreaterThanOrEqual(3);
  for (const entry of entries) expect(entry.correlationId).toBe(w1.runId);

  const ids = [w1, w2, w3, ...entries].map((run) => run.runId);
  const spans = await spanCorrelations(ids);
  expect(spans).toEqual(Object.fromEntries(ids.map((runId) => [runId, w1.runId])));
  // The run report of the last run links the run it resumes.
  expect(await reportOf(w3.runId)).toContain(`resumes <code>${w2.runId}</code>`);
});

test("external_help's contracts show correlationId on the run view, with what it is for", async () => {
  const help = await pi.callTool("external_help", { topic: "contracts", tool: "external_delegate" });
  type Schema = { properties: Record<string, Schema>; description?: string };
  const output = (help.structuredContent as { data: { contract: { output: { anyOf: Schema[] } } } }).data.contract.output;
  const run = output.anyOf[0]!.properties.data!.properties.run!;
  expect(run.properties.correlationId).toMatchObject({ type: "string", description: expect.stringContaining("One ID for a whole line of work") });
});
