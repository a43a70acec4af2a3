import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import { cliTask, FAKE_CLI_BIN, fakeRuns, isAlive, pathWithFakes, pidsOf } from "../support/fake-cli.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";
import { schemaViolation } from "../support/schema.ts";

/**
 * The claude and codex harnesses end to end: a real Pi session, pi-flow loaded from its manifest,
 * and fake `claude`/`codex` executables on PATH that write the real CLIs' stream formats.
 */

let pi: PiTestSession;
afterEach(() => pi?.dispose());

const start = async (env: Record<string, string> = {}) => {
  pi = await startPiSession({ env: { PATH: pathWithFakes(), PI_FLOW_CLI_KILL_GRACE_MS: "300", ...env } });
  writeFileSync(join(pi.cwd, "hello.txt"), "hello\n");
};


async function page(runId: string, view: string): Promise<string> {
  const result = await pi.callTool("external_runs", { action: "inspect", runIds: [runId], view, limitBytes: 65536 });
  return (result.structuredContent as { data: { page: { text: string } } }).data.page.text;
}

describe.each([
  { harness: "claude", answer: "Claude did it — ✓ Run the build and report.", usage: { turns: 2, toolCalls: 1, inputTokens: 280, outputTokens: 42, costUsd: 0.00123 } },
  { harness: "codex", answer: "Codex did it — ✓ Run the build and report.", usage: { turns: 1, toolCalls: 2, inputTokens: 1200, outputTokens: 300 } },
])("external_delegate with harness $harness", ({ harness, answer, usage }) => {
  test("a worker succeeds: the answer inline, usage, and the CLI's session in the run's diagnostics", async () => {
    await start();
    const { receipt, result } = await callForReceipt(pi, "external_delegate", cliTask(harness));
    expect(receipt.ok).toBe(true);
    const run = receipt.data.run!;
    expect(run).toMatchObject({ task: { harness, role: "worker" }, state: { status: "done", outcome: "succeeded" }, usage });
    expect(run.output).toMatchObject({ delivery: "inline", value: answer });
    expect(result.text).toContain(answer);
    const [fake] = fakeRuns(pi.cwd, harness);
    const diagnostics = await page(run.runId, "diagnostics");
    expect(diagnostics).toMatch(new RegExp(`info \\[cli_session\\]: ${harness} session [0-9a-f-]{36}`));
    expect(JSON.parse(await page(run.runId, "launch"))).toMatchObject({ harness, model: "the CLI's default" });
    expect(await page(run.runId, "output")).toContain(answer);
    for (const pid of pidsOf(fake!)) expect(isAlive(pid)).toBe(false);
  });

  test("an explorer runs read-only, and a model name reaches the CLI", async () => {
    await start();
    const model = harness === "claude" ? "anthropic/claude-sonnet-4-5" : "openai/gpt-5-codex";
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...cliTask(harness), role: "explorer", model });
    expect(receipt.ok).toBe(true);
    const [fake] = fakeRuns(pi.cwd, harness);
    expect(fake!.argv).toContain(harness === "claude" ? "--permission-mode=plan" : "--sandbox=read-only");
    expect(fake!.argv).toContain(harness === "claude" ? "--model=claude-sonnet-4-5" : "--model=gpt-5-codex");
  });

  test("cancelling the parent ends the child and every process it started", async () => {
    await start();
    const running = new Promise<void>((resolve) => {
      const unsubscribe = pi.session.subscribe((event) => {
        const details = event.type === "tool_execution_update" ? (event.partialResult.details as { progress?: unknown }) : undefined;
        if (details?.progress) {
          unsubscribe();
          resolve();
        }
      });
    });
    const call = pi.callTool("external_delegate", cliTask(harness, "Wait forever. [fake:stubborn]"));
    await running;
    await pi.session.abort();
    const result = await call;
    expect(result.structuredContent).toMatchObject({ ok: false, error: { code: "cancelled" }, data: { run: { state: { outcome: "cancelled" } } } });
    const [fake] = fakeRuns(pi.cwd, harness);
    expect(fake!.children).toHaveLength(1);
    for (const pid of pidsOf(fake!)) expect(isAlive(pid)).toBe(false);
  });

  test("a background run cancelled with external_runs leaves no process", async () => {
    await start();
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...cliTask(harness, "[fake:hang]"), background: true });
    const runId = receipt.data.run!.runId;
    // The fake records itself before it writes anything: then it is surely running.
    await expect.poll(() => fakeRuns(pi.cwd, harness).length).toBe(1);
    const cancel = await pi.callTool("external_runs", { action: "cancel", runIds: [runId] });
    expect(cancel.structuredContent).toMatchObject({ ok: true, data: { runId, status: "requested" } });
    const waited = await pi.callTool("external_runs", { action: "wait", runIds: [runId] });
    expect(waited.structuredContent).toMatchObject({ ok: true, data: { completed: [{ runId, state: { outcome: "cancelled" } }] } });
    for (const pid of pidsOf(fakeRuns(pi.cwd, harness)[0]!)) expect(isAlive(pid)).toBe(false);
  });

  test("a CLI that crashes fails the run; what it wrote to stderr is in the diagnostics, redacted", async () => {
    await start();
    const { receipt } = await callForReceipt(pi, "external_delegate", cliTask(harness, "[fake:crash]"));
    expect(receipt).toMatchObject({ ok: false, error: { code: "failed", message: expect.stringContaining("exited with code") } });
    expect(receipt.error!.message).toContain("[REDACTED]");
    expect(receipt.error!.message).not.toMatch(/sk-(ant-api03|proj)-abcdefghij/);
    const diagnostics = await page(receipt.data.run!.runId, "diagnostics");
    expect(diagnostics).toContain("warn [stderr]:");
    expect(diagnostics).toContain("[REDACTED]");
    expect(diagnostics).not.toMatch(/sk-(ant-api03|proj)-abcdefghij/);
  });
});

describe("workflows", () => {
  test("agent() runs children on the CLI harnesses, and a role file can choose one", async () => {
    await start();
    mkdirSync(join(pi.cwd, ".pi", "flow", "roles"), { recursive: true });
    writeFileSync(join(pi.cwd, ".pi", "flow", "roles", "codex-reviewer.md"), "---\nname: codex-reviewer\ndescription: Reviews on codex\ntools: read, grep\nharness: codex\n---\nYou review.");
    const { receipt } = await callForReceipt(pi, "external_workflow", {
      script: [
        'const a = await agent({ role: "explorer", harness: "claude", prompt: "Map it.", context: { mode: "none" } });',
        'const b = await agent({ role: "codex-reviewer", prompt: "Review it.", context: { mode: "none" } });',
        "return [a.value, b.value];",
      ].join("\n"),
    });
    expect(receipt).toMatchObject({ ok: true, data: { run: { children: { count: 2 } } } });
    const value = receipt.data.run!.output.value as string[];
    expect(value).toEqual(["Claude did it — ✓ Map it.", "Codex did it — ✓ Review it."]);
    expect(fakeRuns(pi.cwd, "codex")[0]!.argv).toContain("--sandbox=read-only");
  });
});

describe("preflight before launch", () => {
  test.each(["claude", "codex"])("%s missing: harness_unavailable with no run, and the message says how to fix it", async (harness) => {
    await start({ [`PI_FLOW_${harness.toUpperCase()}_BIN`]: "/nonexistent/cli" });
    const result = await pi.callTool("external_delegate", cliTask(harness));
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      ok: false,
      data: { run: null },
      error: { code: "harness_unavailable", message: expect.stringContaining(`PI_FLOW_${harness.toUpperCase()}_BIN=/nonexistent/cli is not an executable file`) },
    });
    expect(fakeRuns(pi.cwd)).toEqual([]);
  });

  test("an unknown role is still selection_invalid first, as the contract's typed-error example expects", async () => {
    await start({ PI_FLOW_CLAUDE_BIN: "/nonexistent/cli" });
    const result = await pi.callTool("external_delegate", { ...cliTask("claude"), role: "nonexistent_role" });
    expect(result.structuredContent).toMatchObject({ ok: false, data: { run: null }, error: { code: "selection_invalid" } });
  });
});

describe("external_help reports each harness's real state", () => {
  test("available with binary and version when the CLI is found; not available with the fix when it is not", async () => {
    await start({ PI_FLOW_CODEX_BIN: "/nonexistent/codex" });
    const claude = await pi.callTool("external_help", { topic: "harnesses", harness: "claude" });
    expect(claude.text).toMatch(/State now: available: Claude Code 2\.1\.197 at .*fake-cli\/bin\/claude \(found via PATH\)/);
    const codex = await pi.callTool("external_help", { topic: "harnesses", harness: "codex" });
    expect(codex.text).toContain("State now: not available: PI_FLOW_CODEX_BIN=/nonexistent/codex is not an executable file");
    expect(codex.text).toContain("npm install -g @openai/codex");
    expect(claude.structuredContent).toMatchObject({
      ok: true,
      data: { harness: "claude", state: { name: "claude", available: true, version: "2.1.197", binary: join(FAKE_CLI_BIN, "claude") } },
    });
    expect(codex.structuredContent).toMatchObject({ ok: true, data: { state: { name: "codex", available: false, detail: expect.stringContaining("not available") } } });
    const overview = await pi.callTool("external_help", { topic: "harnesses" });
    expect(overview.text).toMatch(/- claude: .*\[available: Claude Code 2\.1\.197/);
    expect(overview.text).toMatch(/- codex: .*\[not available: /);
    expect(overview.text).toMatch(/- pi: .*\[available: in-process/);
    const states = (overview.structuredContent as { data: { harnesses: { name: string; available: boolean }[] } }).data.harnesses;
    expect(states.map(({ name, available }) => [name, available])).toEqual([["pi", true], ["claude", true], ["codex", false], ["replay", false], ["stub", true]]);
    for (const result of [claude, codex, overview]) expect(schemaViolation(TOOL_SCHEMAS.external_help.output, result.structuredContent)).toBeNull();
  });

  test("a CLI whose --version hangs holds nothing: Pi's loop runs while help waits, and Ctrl-C ends the check and what it started", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-flow-hang-"));
    const pidFile = join(dir, "grandchild.pid");
    const binary = join(dir, "claude-hangs");
    // A wrapper whose own child holds stdout: it answers nothing until it is killed.
    writeFileSync(binary, `#!/bin/sh\nsleep 300 &\necho $! > '${pidFile}.tmp'\nmv '${pidFile}.tmp' '${pidFile}'\nwait\n`);
    chmodSync(binary, 0o755);
    await start({ PI_FLOW_CLAUDE_BIN: binary });
    try {
      const appeared = new Promise<void>((resolve) => {
        const watcher = watch(dir, () => {
          if (!existsSync(pidFile)) return;
          watcher.close();
          resolve();
        });
      });
      const started = performance.now();
      let settled = false;
      const call = pi.callTool("external_help", { topic: "harnesses", harness: "claude" }).finally(() => (settled = true));
      await appeared;
      // The loop turns while --version runs: a timer fires, and the call is still waiting.
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(settled).toBe(false);
      await pi.session.abort();
      const result = await call;
      expect(result.isError).toBe(true);
      expect(performance.now() - started).toBeLessThan(8000); // not --version's 10 s timeout
      expect(isAlive(Number(readFileSync(pidFile, "utf8")))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
