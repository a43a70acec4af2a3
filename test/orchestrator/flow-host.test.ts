import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { FlowHost } from "../../src/orchestrator/session/flow-host.ts";
import { openRunStore, RunRegistry } from "../../src/runs/index.ts";

let sessions = 0;
// Session markers and runs of these hosts stay in a temp Flow home, never the user's.
process.env.PI_FLOW_HOME = mkdtempSync(join(tmpdir(), "pi-flow-home-"));

/** A host over a real run store, with one live background run whose owner stops it when cancelled. */
function hostWithRun() {
  const sent: unknown[] = [];
  const host = new FlowHost({ sendMessage: (message: unknown) => void sent.push(message), getSettings: () => ({}) } as unknown as ExtensionAPI);
  const sessionId = `s${++sessions}`;
  const ctx = { cwd: tmpdir(), isIdle: () => true, isProjectTrusted: () => true, sessionManager: { getSessionId: () => sessionId, getSessionFile: () => undefined } } as unknown as ExtensionContext;
  const runs = openRunStore({ home: mkdtempSync(join(tmpdir(), "pi-flow-host-")), cwd: tmpdir(), sessionId, registry: new RunRegistry() });
  const writer = runs.create({ kind: "agent", task: { description: "background" }, background: true });
  let settle!: (value: { view: ReturnType<typeof writer.view> }) => void;
  const settled = new Promise<{ view: ReturnType<typeof writer.view> }>((resolve) => (settle = resolve));
  // The owner notices the cancel on its next turn, as a real child does, then records the end.
  writer.onCancel(() => setTimeout(() => settle(writer.settle({ outcome: "cancelled", error: { code: "cancelled", message: "stopped" } })), 20));
  host.bind(ctx);
  host.trackBackground(ctx, writer.runId, runs, settled);
  return { host, ctx, runs, writer, sent };
}

test("once its session has closed, a host refuses new runs with session_closed", async () => {
  const { host, ctx } = hostWithRun();
  expect(() => host.assertOpen()).not.toThrow();
  await host.close("quit", ctx);
  expect(() => host.assertOpen()).toThrow(expect.objectContaining({ code: "session_closed" }));
});

test.each(["quit", "new", "resume", "fork"] as const)("closing for %s cancels live background runs and waits until their journals say so", async (reason) => {
  const { host, ctx, runs, writer } = hostWithRun();
  await host.close(reason, ctx);
  expect(runs.view(writer.runId).state).toMatchObject({ status: "done", outcome: "cancelled" });
});

test("a reload keeps background runs running, and the next instance delivers their completion", async () => {
  const { host, ctx, runs, writer, sent } = hostWithRun();
  await host.close("reload", ctx);
  expect(runs.view(writer.runId).live).toBe(true);
  const next: unknown[] = [];
  const reloaded = new FlowHost({ sendMessage: (message: unknown) => void next.push(message), getSettings: () => ({}) } as unknown as ExtensionAPI);
  runs.cancel(writer.runId);
  await new Promise((resolve) => setTimeout(resolve, 60));
  expect(sent).toEqual([]);
  reloaded.bind(ctx);
  await expect.poll(() => next.length).toBe(1);
  expect(next[0]).toMatchObject({ customType: "pi-flow-run-completed", details: { runId: writer.runId, state: { outcome: "cancelled" } } });
});

test("a host reads its session's settings as it binds, and again only when it binds anew (a reload)", () => {
  let flow = { retention: { maxRuns: 7 } };
  const host = new FlowHost({ getSettings: () => ({ flow }), sendMessage: () => undefined } as unknown as ExtensionAPI);
  const sessionId = `s${++sessions}`;
  const ctx = { cwd: tmpdir(), isIdle: () => true, isProjectTrusted: () => true, sessionManager: { getSessionId: () => sessionId, getSessionFile: () => undefined } } as unknown as ExtensionContext;
  host.bind(ctx);
  flow = { retention: { maxRuns: 9 } };
  expect(host.settings.retention.maxRuns).toBe(7);
  host.bind(ctx);
  expect(host.settings.retention.maxRuns).toBe(9);
  expect(host.settings.flowHome).toBe(process.env.PI_FLOW_HOME);
});
