import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, relative as relativePath } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { FlowError } from "../../src/contract/errors.ts";
import { assertCliAvailable, claudeAdapter, codexAdapter, resolveCliModel } from "../../src/harnesses/cli/index.ts";
import { describePreflight, preflightCli } from "../../src/harnesses/cli/preflight.ts";
import { FAKE_CLI_BIN, isAlive, pathWithFakes } from "../support/fake-cli.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-preflight-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** An executable that prints `output` for --version (and exits with `code`). */
function script(name: string, output: string, code = 0): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\necho '${output}'\nexit ${code}\n`);
  chmodSync(path, 0o755);
  return path;
}

const emptyPath = () => mkdtempSync(join(dir, "empty-"));

describe("preflight", () => {
  test.each([
    { name: "claude", spec: claudeAdapter.spec, version: "2.1.197" },
    { name: "codex", spec: codexAdapter.spec, version: "0.171.0" },
  ])("$name on PATH: available, with its binary and version", async ({ spec, version }) => {
    const preflight = await preflightCli(spec, { PATH: pathWithFakes() });
    expect(preflight).toEqual({ ok: true, binary: join(FAKE_CLI_BIN, spec.command), version, source: "PATH" });
    expect(describePreflight(spec, preflight)).toBe(`available: ${spec.product} ${version} at ${join(FAKE_CLI_BIN, spec.command)} (found via PATH)`);
  });

  test.each([
    { name: "claude", spec: claudeAdapter.spec, install: "npm install -g @anthropic-ai/claude-code" },
    { name: "codex", spec: codexAdapter.spec, install: "npm install -g @openai/codex" },
  ])("$name missing: not available, saying how to install it or where to point", async ({ spec, install }) => {
    const preflight = await preflightCli(spec, { PATH: emptyPath() });
    expect(preflight.ok).toBe(false);
    const text = describePreflight(spec, preflight);
    expect(text).toContain(`\`${spec.command}\` was not found on PATH`);
    expect(text).toContain(install);
    expect(text).toContain(spec.binVariable);
  });

  test("a relative PATH entry is not searched: a project's own `claude` is not the one run", async () => {
    const projectBin = join(dir, "project", "node_modules", ".bin");
    mkdirSync(projectBin, { recursive: true });
    writeFileSync(join(projectBin, "claude"), "#!/bin/sh\necho '2.3.4 (Claude Code)'\n");
    chmodSync(join(projectBin, "claude"), 0o755);
    const relative = relativePath(process.cwd(), projectBin);
    const preflight = await preflightCli(claudeAdapter.spec, { PATH: `${relative}${delimiter}${emptyPath()}` });
    expect(preflight).toMatchObject({ ok: false, reason: "`claude` was not found on PATH" });
    expect(await preflightCli(claudeAdapter.spec, { PATH: `${relative}${delimiter}${pathWithFakes()}` })).toMatchObject({ ok: true, binary: join(FAKE_CLI_BIN, "claude") });
  });

  test("the binary variable wins over PATH, by path or by command name", async () => {
    const pinned = script("my-claude", "2.3.4 (Claude Code)");
    expect(await preflightCli(claudeAdapter.spec, { PATH: pathWithFakes(), PI_FLOW_CLAUDE_BIN: pinned })).toMatchObject({
      ok: true,
      binary: pinned,
      version: "2.3.4",
      source: "PI_FLOW_CLAUDE_BIN",
    });
    expect(await preflightCli(claudeAdapter.spec, { PATH: dir, PI_FLOW_CLAUDE_BIN: "my-claude" })).toMatchObject({ ok: true, binary: pinned });
    const missing = await preflightCli(claudeAdapter.spec, { PATH: pathWithFakes(), PI_FLOW_CLAUDE_BIN: join(dir, "nope") });
    expect(describePreflight(claudeAdapter.spec, missing)).toContain(`PI_FLOW_CLAUDE_BIN=${join(dir, "nope")} is not an executable file`);
  });

  test.each([
    ["too old", "1.0.128 (Claude Code)", 0, "is Claude Code 1.0.128; pi-flow needs 2.0.34 or later"],
    ["without --append-system-prompt-file", "2.0.33 (Claude Code)", 0, "is Claude Code 2.0.33; pi-flow needs 2.0.34 or later"],
    ["another program", "9.9.9", 0, `printed "9.9.9", which is not Claude Code's`],
    ["failing", "boom", 2, "exited with 2"],
  ])("a binary that is %s is not available, with the reason", async (_what, output, code, reason) => {
    const binary = script(`claude-${code}-${output.length}`, output, code);
    const preflight = await preflightCli(claudeAdapter.spec, { PATH: emptyPath(), PI_FLOW_CLAUDE_BIN: binary });
    expect(preflight).toMatchObject({ ok: false, binary, reason: expect.stringContaining(reason) });
    expect(describePreflight(claudeAdapter.spec, preflight)).toContain("Install Claude Code 2.0.34 or later");
  });

  test("what a failing --version printed is quoted redacted: a wrapper that prints a key shows none of it", async () => {
    const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    const stdout = script("claude-prints-key", `OPENAI_API_KEY=${key} \u001b[31mnot claude`);
    const stderr = join(dir, "claude-errs-key");
    writeFileSync(stderr, `#!/bin/sh\necho 'auth failed: OPENAI_API_KEY=${key}' >&2\nexit 3\n`);
    chmodSync(stderr, 0o755);
    for (const binary of [stdout, stderr]) {
      const preflight = await preflightCli(claudeAdapter.spec, { PATH: emptyPath(), PI_FLOW_CLAUDE_BIN: binary });
      const text = describePreflight(claudeAdapter.spec, preflight);
      expect(text).toMatch(/printed "OPENAI_API_KEY=|exited with 3: auth failed/);
      expect(text).not.toContain(key.slice(8));
      expect(text).not.toContain("\u001b");
    }
  });

  test("a --version that prints one 60 KiB line of digits and dots is judged on its first KiB only, not matched whole (seconds of backtracking that held Pi)", async () => {
    const binary = join(dir, "claude-digits");
    // Claude Code's name only past the first KiB: read whole, the line would pass as version 1.1.1.
    writeFileSync(binary, `#!/bin/sh\nprintf '1.1.1%.0s' $(seq 12000)\necho ' (Claude Code)'\n`);
    chmodSync(binary, 0o755);
    const preflight = await preflightCli(claudeAdapter.spec, { PATH: process.env.PATH, PI_FLOW_CLAUDE_BIN: binary });
    expect(preflight).toMatchObject({ ok: false, reason: expect.stringContaining("which is not Claude Code's") });
  });

  test("codex 0.122, which starts the user's MCP servers despite --ignore-user-config, is not available", async () => {
    const binary = script("codex-0122", "codex-cli 0.122.0");
    const preflight = await preflightCli(codexAdapter.spec, { PATH: emptyPath(), PI_FLOW_CODEX_BIN: binary });
    expect(preflight).toMatchObject({ ok: false, binary, reason: expect.stringContaining("is Codex CLI 0.122.0; pi-flow needs 0.123.0 or later") });
    expect(await preflightCli(codexAdapter.spec, { PATH: emptyPath(), PI_FLOW_CODEX_BIN: script("codex-0123", "codex-cli 0.123.0") })).toMatchObject({ ok: true, version: "0.123.0" });
  });

  test("a --version that never answers is not available, and the child its wrapper started is killed with it", async () => {
    const pidFile = join(dir, "grandchild.pid");
    const binary = join(dir, "claude-wrapper");
    // A wrapper script whose own child (holding stdout) outlives a kill of the wrapper alone.
    writeFileSync(binary, `#!/bin/sh\nsleep 300 &\necho $! > '${pidFile}'\nwait\n`);
    chmodSync(binary, 0o755);
    const preflight = await preflightCli(claudeAdapter.spec, { PATH: process.env.PATH, PI_FLOW_CLAUDE_BIN: binary }, { versionTimeoutMs: 1500 });
    expect(preflight).toMatchObject({ ok: false, reason: expect.stringContaining("--version` did not answer within 1500 ms") });
    expect(isAlive(Number(readFileSync(pidFile, "utf8")))).toBe(false);
  });

  test("a --version that never answered is not asked again for a minute: a binary that hangs costs one wait, not one per call", async () => {
    const started = join(dir, "started");
    const binary = join(dir, "claude-hangs");
    writeFileSync(binary, `#!/bin/sh\necho run >> '${started}'\nexec sleep 300\n`);
    chmodSync(binary, 0o755);
    const env = { PATH: process.env.PATH, PI_FLOW_CLAUDE_BIN: binary };
    expect(await preflightCli(claudeAdapter.spec, env, { versionTimeoutMs: 1000 })).toMatchObject({ ok: false, reason: expect.stringContaining("did not answer within 1000 ms") });
    const again = await preflightCli(claudeAdapter.spec, env, { versionTimeoutMs: 1000 });
    expect(again).toMatchObject({ ok: false, reason: expect.stringContaining("checked in the last minute") });
    expect(readFileSync(started, "utf8")).toBe("run\n");
    // A new installation (another size or time) is asked at once.
    writeFileSync(binary, `#!/bin/sh\necho run >> '${started}'\necho '2.3.4 (Claude Code)'\n`);
    expect(await preflightCli(claudeAdapter.spec, env)).toMatchObject({ ok: true, version: "2.3.4" });
  });

  test("a --version that answers leaves nothing it started running", async () => {
    const pidFile = join(dir, "daemon.pid");
    const binary = join(dir, "claude-daemon");
    writeFileSync(binary, `#!/bin/sh\nsleep 300 >/dev/null 2>&1 &\necho $! > '${pidFile}'\necho '2.3.4 (Claude Code)'\n`);
    chmodSync(binary, 0o755);
    expect(await preflightCli(claudeAdapter.spec, { PATH: process.env.PATH, PI_FLOW_CLAUDE_BIN: binary })).toMatchObject({ ok: true, version: "2.3.4" });
    expect(isAlive(Number(readFileSync(pidFile, "utf8")))).toBe(false);
  });

  test("before launch, a --version that hangs holds nothing and the call's abort ends it, with what it started; the abort is not remembered against the binary", async () => {
    const pidFile = join(dir, "grandchild.pid");
    const binary = join(dir, "claude-hangs-until-aborted");
    writeFileSync(binary, `#!/bin/sh\nsleep 300 &\necho $! > '${pidFile}.tmp'\nmv '${pidFile}.tmp' '${pidFile}'\nwait\n`);
    chmodSync(binary, 0o755);
    const previous = { PATH: process.env.PATH, bin: process.env.PI_FLOW_CLAUDE_BIN };
    process.env.PI_FLOW_CLAUDE_BIN = binary;
    try {
      const controller = new AbortController();
      const appeared = new Promise<void>((resolve) => {
        const watcher = watch(dir, () => {
          if (!existsSync(pidFile)) return;
          watcher.close();
          resolve();
        });
      });
      const check = assertCliAvailable("claude", controller.signal);
      // The event loop runs while --version does: the watcher sees the wrapper's child start.
      await appeared;
      controller.abort(new Error("Ctrl-C"));
      // Ended by the abort, not by the 10 s timeout (which fails harness_unavailable, without "Ctrl-C").
      await expect(check).rejects.toThrow("Ctrl-C");
      expect(isAlive(Number(readFileSync(pidFile, "utf8")))).toBe(false);
      // Not held against the binary for a minute, as a timeout is: a fixed one is asked at once.
      writeFileSync(binary, "#!/bin/sh\necho '2.3.4 (Claude Code)'\n");
      await expect(assertCliAvailable("claude")).resolves.toBeUndefined();
    } finally {
      process.env.PATH = previous.PATH;
      if (previous.bin === undefined) delete process.env.PI_FLOW_CLAUDE_BIN;
      else process.env.PI_FLOW_CLAUDE_BIN = previous.bin;
    }
  });

  test("launches that check one binary at once share one --version: a fan-out starts one process, not one per child", async () => {
    const started = join(dir, "started");
    const binary = join(dir, "claude-counted");
    writeFileSync(binary, `#!/bin/sh\necho run >> '${started}'\necho '2.3.6 (Claude Code)'\n`);
    chmodSync(binary, 0o755);
    const env = { PATH: process.env.PATH, PI_FLOW_CLAUDE_BIN: binary };
    const checks = await Promise.all(Array.from({ length: 8 }, () => preflightCli(claudeAdapter.spec, env)));
    for (const check of checks) expect(check).toMatchObject({ ok: true, version: "2.3.6" });
    expect(readFileSync(started, "utf8")).toBe("run\n");
  });

  test("one launch's abort leaves a --version another launch still waits for running", async () => {
    const binary = join(dir, "claude-slow");
    const gate = join(dir, "gate");
    // Answers once the test opens the gate (a file appears), so both calls wait on one run.
    writeFileSync(binary, `#!/bin/sh\nwhile [ ! -e '${gate}' ]; do sleep 0.05; done\necho '2.3.7 (Claude Code)'\n`);
    chmodSync(binary, 0o755);
    const env = { PATH: process.env.PATH, PI_FLOW_CLAUDE_BIN: binary };
    const controller = new AbortController();
    const aborted = preflightCli(claudeAdapter.spec, env, { signal: controller.signal });
    const waiting = preflightCli(claudeAdapter.spec, env);
    controller.abort();
    expect(await aborted).toMatchObject({ ok: false, reason: expect.stringContaining("was cancelled") });
    writeFileSync(gate, "");
    expect(await waiting).toMatchObject({ ok: true, version: "2.3.7" });
  });

  test("before launch, a missing CLI is harness_unavailable with the fix in its message", async () => {
    const previous = process.env.PATH;
    process.env.PATH = emptyPath();
    try {
      await expect(assertCliAvailable("codex")).rejects.toThrow(FlowError);
      await expect(assertCliAvailable("codex")).rejects.toMatchObject({
        code: "harness_unavailable",
        message: expect.stringMatching(/codex harness is not available: .*npm install -g @openai\/codex/),
      });
      process.env.PATH = pathWithFakes(previous);
      await expect(assertCliAvailable("codex")).resolves.toBeUndefined();
    } finally {
      process.env.PATH = previous;
    }
  });
});

describe("CLI model names", () => {
  test("pass through, without the CLI's provider prefix; anything flag-like is model_unavailable", () => {
    expect(resolveCliModel("claude", undefined)).toBeUndefined();
    expect(resolveCliModel("claude", "anthropic/claude-sonnet-4-5")).toBe("claude-sonnet-4-5");
    expect(resolveCliModel("claude", "claude-opus-4-8[1m]")).toBe("claude-opus-4-8[1m]");
    expect(resolveCliModel("codex", "openai/gpt-5-codex")).toBe("gpt-5-codex");
    expect(resolveCliModel("codex", "gpt-5")).toBe("gpt-5");
    for (const bad of ["--dangerously-skip-permissions", "sonnet; rm -rf /", "", "a b"]) {
      expect(() => resolveCliModel("claude", bad)).toThrow(expect.objectContaining({ code: "model_unavailable" }));
    }
  });
});
