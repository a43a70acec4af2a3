/**
 * A child's progress is shown live (the TUI's background widget, a tool row, flow's stderr) as the
 * harness reports it: for a CLI child, text the CLI wrote, such as its model's name. It reaches
 * those views redacted and without escape sequences.
 */
import { afterEach, expect, test } from "vitest";
import { liveProgress } from "../../src/orchestrator/session/live-progress.ts";
import { childAnswers, childHangs } from "../support/children.ts";
import { cliTask, pathWithFakes } from "../support/fake-cli.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";

let pi: PiTestSession;
afterEach(() => pi?.dispose());

const AWS_SECRET = "q3Vn8Rz/Lt0Yb5Hk+Wp2Xs9Dm4Gc7Jf1Na6Ue0Tk";

/** Resolves once `read` returns a value: the progress board is filled by the child's own events. */
async function until<T>(read: () => T | undefined): Promise<T> {
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test("a CLI child's model name reaches the background widget's progress redacted and without escapes", async () => {
  pi = await startPiSession({ env: { PATH: pathWithFakes(), PI_FLOW_CLI_KILL_GRACE_MS: "300" } });
  const { run } = await callForReceipt(pi, "external_delegate", { ...cliTask("claude", "go [fake:hostile-hang]"), background: true });
  const runId = run!.runId;
  const activity = await until(() => {
    const shown = liveProgress(runId)?.progress?.activity;
    return shown?.startsWith("started") ? shown : undefined;
  });
  expect(activity).toBe("started on sonnet [REDACTED]");
  expect(activity).not.toContain(AWS_SECRET);
  await pi.callTool("external_runs", { action: "cancel", runIds: [runId] });
  await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
});

test("a workflow child's last line of output reaches the TUI's workflow tree redacted and without escapes", async () => {
  pi = await startPiSession();
  const script = [
    'const first = await agent({ role: "explorer", description: "leaky", prompt: "Say the key.", context: { mode: "none" } });',
    'await agent({ role: "explorer", description: "waits", prompt: "Wait.", context: { mode: "none" } });',
    "return first.value;",
  ].join("\n");
  const said = `Here it is:\n\u001b]0;pwned\u0007export AWS_SECRET=${AWS_SECRET}`;
  const { run } = await callForReceipt(pi, "external_workflow", { script, background: true }, { children: [childAnswers(said), childHangs()] });
  const runId = run!.runId;
  const lastOutput = await until(() => {
    const children = liveProgress(runId)?.children;
    return children && children.length === 2 ? children[0]!.lastOutput : undefined;
  });
  expect(lastOutput).toBe("export AWS_SECRET=[REDACTED]");
  await pi.callTool("external_runs", { action: "cancel", runIds: [runId] });
  await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
});
