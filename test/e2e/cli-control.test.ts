import { afterEach, describe, expect, test } from "vitest";
import { cliTask, fakeRuns, isAlive, pathWithFakes, pidsOf } from "../support/fake-cli.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";

/**
 * Quotas, resume and steering on the claude and codex harnesses, end to end: a real Pi session and
 * fake `claude`/`codex` executables on PATH that write the real CLIs' stream formats.
 */

let pi: PiTestSession;
afterEach(() => pi?.dispose());

const start = async () => {
  pi = await startPiSession({ env: { PATH: pathWithFakes(), PI_FLOW_CLI_KILL_GRACE_MS: "300" } });
};


test("maxTurns fails closed on claude: its third model response stops the run, naming the quota", async () => {
  await start();
  const { receipt } = await callForReceipt(pi, "external_delegate", { ...cliTask("claude", "Keep going. [fake:busy]"), maxTurns: 2 });
  expect(receipt).toMatchObject({ ok: false, error: { code: "failed", message: expect.stringContaining("maxTurns (2)") } });
  for (const pid of pidsOf(fakeRuns(pi.cwd, "claude")[0]!)) expect(isAlive(pid)).toBe(false);
});

describe.each(["claude", "codex"])("harness %s", (harness) => {
  test("maxToolCalls fails closed: the third call ends the CLI's whole process group and the run fails naming the quota", async () => {
    await start();
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...cliTask(harness, "Keep going. [fake:busy]"), maxToolCalls: 2 });
    expect(receipt).toMatchObject({
      ok: false,
      error: { code: "failed", message: expect.stringContaining("maxToolCalls (2)") },
      data: { run: { state: { status: "done", outcome: "failed" }, usage: { toolCalls: 3 } } },
    });
    const [fake] = fakeRuns(pi.cwd, harness);
    expect(fake!.children).toHaveLength(1);
    for (const pid of pidsOf(fake!)) expect(isAlive(pid)).toBe(false);
  });

  test("within its quotas a child succeeds", async () => {
    await start();
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...cliTask(harness), maxToolCalls: 2, maxTurns: 2 });
    expect(receipt).toMatchObject({ ok: true, data: { run: { state: { outcome: "succeeded" } } } });
  });

  test("resume continues the CLI session the earlier run recorded", async () => {
    await start();
    const first = await callForReceipt(pi, "external_delegate", cliTask(harness, "First part."));
    expect(first.receipt.ok).toBe(true);
    const firstRunId = first.receipt.data.run!.runId;
    // The resumed run leaves harness out: it runs where the earlier run ran.
    const { role, description, context } = cliTask(harness);
    const second = await callForReceipt(pi, "external_delegate", { role, description, context, prompt: "Second part.", resume: firstRunId });
    expect(second.receipt).toMatchObject({ ok: true, data: { run: { task: { harness }, state: { outcome: "succeeded" } } } });
    const runs = fakeRuns(pi.cwd, harness);
    expect(runs).toHaveLength(2);
    const resumed = runs.find((run) => run.prompt.includes("Second part."))!;
    const recorded = await sessionOf(firstRunId);
    expect(resumed.argv).toEqual(harness === "claude" ? expect.arrayContaining([`--resume=${recorded}`]) : expect.arrayContaining(["resume", recorded]));
    // A resumed claude run forks its session (a new id); codex continues the thread in place. Its
    // launch evidence names the run it resumed.
    const resumedSession = await sessionOf(second.receipt.data.run!.runId);
    if (harness === "claude") expect(resumedSession).not.toBe(recorded);
    else expect(resumedSession).toBe(recorded);
    const launch = await pi.callTool("external_runs", { action: "inspect", runIds: [second.receipt.data.run!.runId], view: "launch" });
    expect(JSON.parse((launch.structuredContent as { data: { page: { text: string } } }).data.page.text)).toMatchObject({ resume: firstRunId });
    await twoResumesAtOnce(harness, firstRunId, recorded);
  });

  test("error codes keep their v1 meaning: steering a running CLI child answers status unsupported (not harness_unavailable), and the child runs on; resuming it is refused without advice to steer it", async () => {
    await start();
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...cliTask(harness, "[fake:hang]"), background: true });
    const runId = receipt.data.run!.runId;
    await expect.poll(() => fakeRuns(pi.cwd, harness).length).toBe(1);
    const steer = await pi.callTool("external_runs", { action: "steer", runIds: [runId], message: "Also check the docs." });
    expect(steer.structuredContent).toMatchObject({ ok: true, data: { runId, status: "unsupported", held: false } });
    expect(steer.text).toMatch(/cannot be steered.*not delivered/);
    // Its advice works in the order given: a resume right after the cancel would be refused as still running.
    expect(steer.text).toContain(`external_runs ${JSON.stringify({ action: "cancel", runIds: [runId] })}, wait for it with external_runs ${JSON.stringify({ action: "wait", runIds: [runId] })}, then resume it`);
    const view = await pi.callTool("external_runs", { action: "inspect", runIds: [runId] });
    expect(view.structuredContent).toMatchObject({ ok: true, data: { entries: [{ runId, live: true }] } });
    // Resuming it is refused with advice that works for this harness: not "steer it instead".
    const { role, description, context } = cliTask(harness);
    const resumed = await callForReceipt(pi, "external_delegate", { role, description, context, prompt: "More.", resume: runId });
    expect(resumed.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "request_invalid" } });
    expect(resumed.receipt.error!.message).toBe(
      `Run ${runId} is still running, and a ${harness} child cannot be steered: wait for it with external_runs ${JSON.stringify({ action: "wait", runIds: [runId] })} (or cancel it), then resume it.`,
    );
    await pi.callTool("external_runs", { action: "cancel", runIds: [runId] });
    await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
  });
});

/**
 * Two resumes of one run in one message (two parallel calls). claude: both run at the same time,
 * each in a fork of its own (--fork-session), so neither CLI writes the session they resume from
 * and neither sees the other's turns. codex cannot fork: exactly one runs, the other is refused
 * before launch or fails before codex starts, never two processes on one thread.
 */
async function twoResumesAtOnce(harness: string, runId: string, session: string): Promise<void> {
  const { role, description, context } = cliTask(harness);
  const resume = (part: string) => ({ name: "external_delegate", args: { role, description, context, prompt: `${part} [fake:hang]`, resume: runId, background: true } });
  const receipts = (await pi.callToolsAtOnce([resume("Left part."), resume("Right part.")])).map(
    (result) => result.structuredContent as { ok: boolean; data: { run: { runId: string } | null }; error?: { code: string } },
  );
  const accepted = receipts.filter((receipt) => receipt.ok).map((receipt) => receipt.data.run!.runId);
  const hanging = () => fakeRuns(pi.cwd, harness).filter((run) => run.prompt.includes("[fake:hang]"));
  if (harness === "claude") {
    expect(accepted).toHaveLength(2);
    await expect.poll(() => hanging().length, { timeout: 30_000 }).toBe(2);
    for (const fake of hanging()) {
      expect(isAlive(fake.pid)).toBe(true);
      expect(fake.argv).toEqual(expect.arrayContaining([`--resume=${session}`, "--fork-session"]));
    }
    // Each reports a session of its own once its CLI named one.
    const forks: string[] = [];
    for (const id of accepted) {
      await expect.poll(() => sessionOf(id).catch(() => ""), { timeout: 30_000 }).not.toBe("");
      forks.push(await sessionOf(id));
    }
    expect(new Set([session, ...forks]).size).toBe(3);
  } else {
    // Refused before launch (request_invalid), or accepted and failed at once by the thread's claim.
    const refused = receipts.filter((receipt) => !receipt.ok);
    for (const receipt of refused) expect(receipt).toMatchObject({ data: { run: null }, error: { code: "request_invalid" } });
    if (refused.length === 0) {
      const waited = await pi.callTool("external_runs", { action: "wait", runIds: accepted, mode: "any" });
      const settled = (waited.structuredContent as { data: { completed: { state: { outcome: string; error?: { message: string } } }[] } }).data.completed;
      expect(settled).toMatchObject([{ state: { outcome: "failed", error: { message: expect.stringContaining("is being continued by another run") } } }]);
    } else expect(refused).toHaveLength(1);
    await expect.poll(() => hanging().length, { timeout: 30_000 }).toBe(1);
  }
  for (const id of accepted) await pi.callTool("external_runs", { action: "cancel", runIds: [id] });
  await pi.callTool("external_runs", { action: "wait", runIds: accepted });
}

/** The CLI session a run recorded in its diagnostics. */
async function sessionOf(runId: string): Promise<string> {
  const result = await pi.callTool("external_runs", { action: "inspect", runIds: [runId], view: "diagnostics", limitBytes: 65536 });
  const text = (result.structuredContent as { data: { page: { text: string } } }).data.page.text;
  const match = /\[cli_session\]: \w+ session (\S+)/.exec(text);
  if (!match) throw new Error(`run ${runId} recorded no CLI session`);
  return match[1]!;
}
