/**
 * Nothing lost at size, in one real Pi session: background delegations and the children of one
 * workflow, every result delivered exactly once (by a wait or a completion message), with
 * completions that settle while the parent is busy batched into one message and one turn.
 * Deliveries are counted from session events as messages enter the session (never from
 * session.messages, which compaction rewrites). PI_FLOW_SCALE_N sets the size (`npm run
 * test:scale` runs 1,000 and prints the figures); `npm test` runs a smaller size.
 */
import { afterEach, describe, expect, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { childAnswers } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

const N = Number(process.env.PI_FLOW_SCALE_N ?? 100);
const report = process.env.PI_FLOW_SCALE_REPORT === "1";
/** Room for a loaded machine: this bounds a hang, it is not a speed target. */
const TIMEOUT_MS = Math.max(60_000, N * 600);

let pi: PiTestSession | undefined;
afterEach(() => pi?.dispose());

/** Every completion message that entered the session, with the runs it carried, and every agent run started. */
function observe(session: PiTestSession["session"]) {
  const messages: string[][] = [];
  let agentRuns = 0;
  let notify = () => {};
  session.subscribe((event) => {
    if (event.type === "agent_start") agentRuns++;
    if (event.type !== "message_end") return;
    const message = event.message as { role: string; customType?: string; details?: unknown };
    if (message.role !== "custom") return;
    if (message.customType === "pi-flow-run-completed") messages.push([(message.details as RunView).runId]);
    else if (message.customType === "pi-flow-runs-completed") messages.push((message.details as { runs: RunView[] }).runs.map((run) => run.runId));
    else return;
    notify();
  });
  const delivered = () => messages.flat();
  const until = (count: number) =>
    new Promise<void>((resolve) => {
      notify = () => delivered().length >= count && resolve();
      notify();
    });
  return { messages, delivered, until, agentRuns: () => agentRuns };
}

const idle = (session: PiTestSession["session"]) =>
  new Promise<void>((resolve) => {
    if (session.isIdle) return resolve();
    const stop = session.subscribe((event) => {
      if (event.type === "agent_settled") {
        stop();
        resolve();
      }
    });
  });

function counts(ids: readonly string[]): Map<string, number> {
  const seen = new Map<string, number>();
  for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1);
  return seen;
}

describe(`at size (${N})`, () => {
  test(`${N} background delegations: every result delivered exactly once; those that settle during a busy turn arrive as one message and one turn`, async () => {
    pi = await startPiSession({ env: { PI_FLOW_MAX_BACKGROUND: "32" } });
    const seen = observe(pi.session);
    const started = performance.now();
    // The script starts every run, waits for every tenth (those are delivered by the wait), and
    // watches the rest settle with inspect (which delivers nothing), so all of them settle while
    // the parent is busy with this one turn.
    const outcome = await pi.runCodemode(
      `const ids = [];
       for (let i = 0; i < ${N}; i++) {
         const r = await tools.external_delegate({ role: "worker", description: "b" + i, prompt: "p" + i, context: { mode: "none" }, background: true });
         if (!r.ok) throw new Error(JSON.stringify(r.error));
         ids.push(r.data.run.runId);
       }
       const waitedFor = ids.filter((_, i) => i % 10 === 0);
       const waited = [];
       for (let i = 0; i < waitedFor.length; i += 50) {
         const w = await tools.external_runs({ action: "wait", runIds: waitedFor.slice(i, i + 50) });
         waited.push(...w.data.completed.map((run) => run.runId));
       }
       let watching = ids.filter((_, i) => i % 10 !== 0);
       while (watching.length > 0) {
         const page = await tools.external_runs({ action: "inspect", runIds: watching.slice(0, 100) });
         const done = new Set(page.data.entries.filter((run) => run.state.status === "done").map((run) => run.runId));
         watching = watching.filter((id) => !done.has(id));
       }
       return { ids, waited };`,
      { children: Array.from({ length: N }, (_, i) => childAnswers(`answer ${i}`)) },
    );
    const { ids, waited } = outcome.value as { ids: string[]; waited: string[] };
    expect(ids).toHaveLength(N);
    await seen.until(N - waited.length);
    await idle(pi.session);
    const lastDelivery = performance.now() - started;

    const pushed = seen.delivered();
    expect(new Set(waited).size).toBe(Math.ceil(N / 10));
    expect(pushed).toHaveLength(N - waited.length);
    expect([...counts([...pushed, ...waited]).values()].every((count) => count === 1)).toBe(true);
    expect(new Set([...pushed, ...waited])).toEqual(new Set(ids));
    // All of them settled during the busy turn: one message, and one parent turn besides the script's.
    expect(seen.messages).toHaveLength(1);
    expect(seen.agentRuns()).toBe(2);
    if (report) console.log(`[scale] ${N} background delegations settling in a busy turn: last delivery ${lastDelivery.toFixed(0)} ms, ${seen.messages.length} completion message, ${seen.agentRuns()} parent turns in all`);
  }, TIMEOUT_MS);

  test(`${N} background delegations left to finish after the turn: each delivered once, in far fewer messages than runs`, async () => {
    pi = await startPiSession({ env: { PI_FLOW_MAX_BACKGROUND: "32" } });
    const seen = observe(pi.session);
    const started = performance.now();
    const outcome = await pi.runCodemode(
      `const ids = [];
       for (let i = 0; i < ${N}; i++) {
         const r = await tools.external_delegate({ role: "worker", description: "b" + i, prompt: "p" + i, context: { mode: "none" }, background: true });
         ids.push(r.data.run.runId);
       }
       return ids;`,
      { children: Array.from({ length: N }, (_, i) => childAnswers(`answer ${i}`)) },
    );
    const ids = outcome.value as string[];
    await seen.until(N);
    await idle(pi.session);
    const lastDelivery = performance.now() - started;
    const pushed = seen.delivered();
    expect(pushed).toHaveLength(N);
    expect(new Set(pushed)).toEqual(new Set(ids));
    // Each message triggers exactly one turn (the first turn is the script's).
    expect(seen.agentRuns()).toBe(1 + seen.messages.length);
    expect(seen.messages.length).toBeLessThan(N);
    if (report) console.log(`[scale] ${N} background delegations: last delivery ${lastDelivery.toFixed(0)} ms, ${seen.messages.length} completion messages, ${seen.agentRuns()} parent turns in all`);
  }, TIMEOUT_MS);

  test(`one workflow with ${N} children: every child's result reaches the script, and the root completes`, async () => {
    pi = await startPiSession();
    const started = performance.now();
    const script = [
      `export const meta = { limits: { agentCalls: ${N}, concurrency: 32 } };`,
      `const results = await parallel(Array.from({ length: ${N} }, (_, i) => () => agent({ role: "worker", description: "c" + i, prompt: "item " + i, context: { mode: "none" } })));`,
      `const answers = results.map((r) => r.value);`,
      `return { runs: new Set(results.map((r) => r.runId)).size, answers: new Set(answers).size, wellFormed: answers.every((a) => /^answer \\d+$/.test(a)) };`,
    ].join("\n");
    const call = await pi.callTool("external_workflow", { script }, { children: Array.from({ length: N }, (_, i) => childAnswers(`answer ${i}`)) });
    const elapsed = performance.now() - started;
    const receipt = call.structuredContent as { ok: boolean; data: { run: RunView } };
    expect(receipt.ok).toBe(true);
    expect(receipt.data.run.output.value).toEqual({ runs: N, answers: N, wellFormed: true });
    expect(receipt.data.run.children).toMatchObject({ count: N });
    if (report) console.log(`[scale] one workflow with ${N} children: ${elapsed.toFixed(0)} ms`);
  }, TIMEOUT_MS);
});
