import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { FlowHost } from "../../src/orchestrator/flow-host.ts";
import { openRunStore, RunRegistry } from "../../src/runs/index.ts";

function hostWithRun() {
  const sent: unknown[] = [];
  const host = new FlowHost({ sendMessage: (message: unknown) => void sent.push(message) } as unknown as ExtensionAPI);
  const runs = openRunStore({ home: mkdtempSync(join(tmpdir(), "pi-flow-host-")), cwd: tmpdir(), sessionId: "s1", registry: new RunRegistry() });
  const writer = runs.create({ kind: "agent", task: { description: "background" }, background: true });
  let cancelled = false;
  writer.onCancel(() => {
    cancelled = true;
    writer.settle({ outcome: "cancelled", error: { code: "cancelled", message: "stopped" } });
  });
  host.trackBackground(writer.runId, runs, new Promise(() => undefined));
  return { host, runs, writer, sent, wasCancelled: () => cancelled };
}

test("once its session has closed, a host refuses new runs with session_closed", () => {
  const { host } = hostWithRun();
  expect(() => host.assertOpen()).not.toThrow();
  host.close("quit");
  expect(() => host.assertOpen()).toThrow(expect.objectContaining({ code: "session_closed" }));
});

test.each(["quit", "new", "resume", "fork"] as const)("closing for %s stops live background runs, so they end cancelled", (reason) => {
  const { host, runs, writer, wasCancelled } = hostWithRun();
  host.close(reason);
  expect(wasCancelled()).toBe(true);
  expect(runs.view(writer.runId).state.outcome).toBe("cancelled");
});

test("a reload leaves background runs running", () => {
  const { host, runs, writer, wasCancelled } = hostWithRun();
  host.close("reload");
  expect(wasCancelled()).toBe(false);
  expect(runs.view(writer.runId).live).toBe(true);
});
