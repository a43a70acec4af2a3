import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { startOf } from "../../src/harnesses/cli/process-scan.mjs";
import { createPiHarness } from "../../src/harnesses/pi.ts";
import type { ChildRequest } from "../../src/harnesses/types.ts";

/**
 * A pi child's bash runs real commands through a real child AgentSession on Pi's faux provider:
 * what its environment holds, and what it leaves running once the child has settled.
 */

let dir: string;
const saved: Record<string, string | undefined> = {};
const SET = {
  ANTHROPIC_API_KEY: "sk-ant-api03-childbashtestkey0123456789abcdefghij",
  GH_TOKEN: "ghp_childbashtesttoken0123456789abcdefghij",
  PI_FLOW_DATABASE_URL: "postgres://flow:fleetpassword@db.example:5432/flow",
  OTEL_EXPORTER_OTLP_HEADERS: "x-honeycomb-team=collectorkey123",
  // The same collector's key for the metrics and logs another tool of the user's exports.
  OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-honeycomb-team=collectorkey123",
  OTEL_EXPORTER_OTLP_LOGS_HEADERS: "x-honeycomb-team=collectorkey123",
  // Secrets under names of no provider: an ingest key, a bearer token kept under its scheme's name.
  HONEYCOMB_WRITEKEY: "hcaik_01hx7k2m3n4p5q6r7s8t9v0w1x2y3z4a5b6c7d8e9f0g",
  KUBE_BEARER: "Zx8kQ2mN7pL4vR9tY3wB6cH1jF5gD0sAeUiOq",
  CHILD_BASH_PLAIN: "plain-setting",
  // flow run from a git hook: git's own pointers at the user's repository and index.
  GIT_DIR: "/home/user/project/.git",
  GIT_WORK_TREE: "/home/user/project",
  GIT_INDEX_FILE: "/home/user/project/.git/index",
  PI_FLOW_PI_ENV: undefined,
  // This process as a claude or codex child of another pi-flow: that one's tag for what it starts.
  PI_FLOW_CLI_TAG: "0123456789abcdef01234567",
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-child-bash-"));
  for (const [name, value] of Object.entries(SET)) {
    saved[name] = process.env[name];
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** A pi harness whose child runs `commands` in bash, one tool call each, then answers "done"; `onResult` reads each tool result as the child's model does. */
function harnessRunning(commands: (string | { command: string; timeout: number })[], onResult: (text: string) => void = () => {}) {
  return harnessCalling(commands.map((command) => ({ name: "bash", args: typeof command === "string" ? { command } : command })), onResult);
}

/** A pi harness whose child makes these tool calls, one a turn, then answers "done". */
async function harnessCalling(calls: { name: string; args: Parameters<typeof fauxToolCall>[1] }[], onResult: (text: string) => void = () => {}) {
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  const step =
    (reply: ReturnType<typeof fauxAssistantMessage>): FauxResponseStep =>
    (context) => {
      const last = context.messages.at(-1);
      if (last?.role === "toolResult") onResult(last.content.map((part) => (part.type === "text" ? part.text : "")).join(""));
      return reply;
    };
  faux.setResponses([
    ...calls.map(({ name, args }, index) => step(fauxAssistantMessage([fauxToolCall(name, args, { id: `call_${index}` })], { stopReason: "toolUse" }))),
    step(fauxAssistantMessage([fauxText("done")])),
  ]);
  const runtime = await ModelRuntime.create({ authPath: join(dir, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");
  return createPiHarness({ agentDir: join(dir, "agent"), model: faux.getModel(), modelRuntime: runtime });
}

function request(signal = new AbortController().signal, isolated = true): ChildRequest {
  return {
    profile: { name: "worker", description: "w", systemPrompt: "You work.", tools: ["read", "bash"], defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:worker", description: "bash test" },
    prompt: "Run the commands.",
    cwd: dir,
    loading: { projectTrusted: true, isolated },
    signal,
    onProgress: () => {},
    onOutput: () => {},
    onDiagnostic: () => {},
  };
}

const environmentOf = (file: string): Map<string, string> =>
  new Map(
    readFileSync(file, "utf8")
      .split("\0")
      .filter((entry) => entry.includes("="))
      .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
  );

describe("what a pi child's bash and extensions get, and leave behind", () => {
  test("gets no provider key, token or pi-flow credential of this process, and keeps every other variable", async () => {
    const harness = await harnessRunning(["env -0 > env.txt"]);
    expect(await harness.run(request())).toMatchObject({ outcome: "succeeded", value: "done" });
    const env = environmentOf(join(dir, "env.txt"));
    for (const name of ["ANTHROPIC_API_KEY", "GH_TOKEN", "PI_FLOW_DATABASE_URL", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "HONEYCOMB_WRITEKEY", "KUBE_BEARER"]) {
      expect(env.has(name), name).toBe(false);
    }
    expect(env.get("CHILD_BASH_PLAIN")).toBe("plain-setting");
    // A worktree child's git finds its repository from its folder, never the user's through a hook's variables.
    for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"]) expect(env.has(name), name).toBe(false);
    expect(env.get("PATH")).toContain("/");
    expect(env.get("HOME")).toBe(process.env.HOME);
    // The outer pi-flow's tag passes on, so stopping its CLI child still finds this command; the child's own is beside it.
    expect(env.get("PI_FLOW_CLI_TAG")).toBe(SET.PI_FLOW_CLI_TAG);
    expect(env.get("PI_FLOW_PI_TAG")).toMatch(/^[0-9a-f]{24}$/);
    // The user's own session is untouched: this process still holds its keys.
    expect(process.env.ANTHROPIC_API_KEY).toBe(SET.ANTHROPIC_API_KEY);
  });

  test("gets the variables PI_FLOW_PI_ENV names, but never pi-flow's own credentials", async () => {
    process.env.PI_FLOW_PI_ENV = "ANTHROPIC_API_KEY, PI_FLOW_DATABASE_URL GH_* OTEL_EXPORTER_OTLP_METRICS_HEADERS";
    const harness = await harnessRunning(["env -0 > env.txt"]);
    expect(await harness.run(request())).toMatchObject({ outcome: "succeeded" });
    const env = environmentOf(join(dir, "env.txt"));
    expect(env.get("ANTHROPIC_API_KEY")).toBe(SET.ANTHROPIC_API_KEY);
    expect(env.get("GH_TOKEN")).toBe(SET.GH_TOKEN);
    expect(env.get("OTEL_EXPORTER_OTLP_METRICS_HEADERS")).toBe(SET.OTEL_EXPORTER_OTLP_METRICS_HEADERS);
    expect(env.has("PI_FLOW_DATABASE_URL")).toBe(false);
    expect(env.has("OTEL_EXPORTER_OTLP_HEADERS")).toBe(false);
  });

  test("leaves nothing running once the child has settled: a background job, and one that left the shell's process group", async () => {
    const harness = await harnessRunning([
      "sleep 3000 > /dev/null 2>&1 & echo $! > background.pid",
      "setsid sleep 3001 > /dev/null 2>&1 < /dev/null & echo $! > detached.pid",
    ]);
    expect(await harness.run(request())).toMatchObject({ outcome: "succeeded", value: "done" });
    for (const file of ["background.pid", "detached.pid"]) {
      const pid = Number(readFileSync(join(dir, file), "utf8").trim());
      expect(pid, file).toBeGreaterThan(0);
      expect(startOf(pid), `${file}: process ${pid} still runs`).toBeUndefined();
    }
  });

  test("leaves nothing running once the child has settled also when a command dropped the child's tag from its environment (env -u, env -i): it is still in the session its command's shell started", async () => {
    const harness = await harnessRunning([
      "env -u PI_FLOW_PI_TAG sleep 3002 > /dev/null 2>&1 & echo $! > untagged.pid",
      "env -i /bin/sleep 3003 > /dev/null 2>&1 & echo $! > bare.pid",
    ]);
    expect(await harness.run(request())).toMatchObject({ outcome: "succeeded", value: "done" });
    for (const file of ["untagged.pid", "bare.pid"]) {
      const pid = Number(readFileSync(join(dir, file), "utf8").trim());
      expect(pid, file).toBeGreaterThan(0);
      expect(startOf(pid), `${file}: process ${pid} still runs`).toBeUndefined();
    }
  });

  /** Starts exiting-host.ts, ends it with `signal` once both children's commands run (or it exited), and returns how it ended. */
  async function hostEndedWhileCommandsRun(signal: NodeJS.Signals, ...options: ("old-reaper" | "untagged" | "escaped")[]) {
    const host = spawn(process.execPath, [fileURLToPath(new URL("./fixtures/exiting-host.ts", import.meta.url)), dir, ...options], { stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    const running = new Promise<void>((resolve) =>
      host.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes("running")) resolve();
      }),
    );
    const exited = once(host, "exit");
    await Promise.race([running, exited]);
    host.kill(signal);
    const [code, ended] = (await exited) as [number | null, NodeJS.Signals | null];
    // A reaper process only once a pi child's bash has run a command, then one for the host.
    expect(stdout).toBe("idle, reapers: 0\nrunning, reapers: 1\n");
    return { code, signal: ended };
  }

  /** Waits until neither child's sleep runs any more. */
  async function sleepsEnd() {
    for (const file of ["sleep-1.pid", "sleep-2.pid"]) {
      const pid = Number(readFileSync(join(dir, file), "utf8").trim());
      // SIGKILL (or the reaper's SIGTERM) went out as the host died; the kernel ends the process a moment later.
      await expect.poll(() => startOf(pid)).toBeUndefined();
    }
  }

  test("a host that exits while its children's commands run (flow worker on SIGTERM) leaves nothing of them running", async () => {
    expect((await hostEndedWhileCommandsRun("SIGTERM")).code).toBe(143);
    await sleepsEnd();
  });

  test("a host killed with SIGKILL while its children's commands run leaves nothing of them running: the reaper ends them", async () => {
    expect((await hostEndedWhileCommandsRun("SIGKILL")).signal).toBe("SIGKILL");
    await sleepsEnd();
  });

  test("a host killed with SIGKILL ends its children's commands also when they dropped the child's tag from their environment (env -u, env -i): the reaper knows the sessions their shells started", async () => {
    expect((await hostEndedWhileCommandsRun("SIGKILL", "untagged")).signal).toBe("SIGKILL");
    await sleepsEnd();
  });

  test("a host killed with SIGKILL ends its children's commands also when they left the session (setsid) and dropped the tag, while the shell that started them still runs: they descend from a tagged process", async () => {
    expect((await hostEndedWhileCommandsRun("SIGKILL", "escaped")).signal).toBe("SIGKILL");
    await sleepsEnd();
  });

  test("a host killed with SIGKILL ends its children's commands also when an older copy of pi-flow started its reaper, which reads no pi child's line: one that does is started beside it", async () => {
    expect((await hostEndedWhileCommandsRun("SIGKILL", "old-reaper")).signal).toBe("SIGKILL");
    await sleepsEnd();
  });

  test("removes the files Pi kept a long command's whole output in, once the child has settled: finished or timed out", async () => {
    const results: { text: string; files: string[]; there: boolean[] }[] = [];
    const harness = await harnessRunning(["seq 1 5000", { command: "seq 1 5000; sleep 3006", timeout: 1 }], (text) => {
      // While the child runs, the file its tool result names is there for it to read.
      const files = [...text.matchAll(/Full output: (\S+)\]/g)].map(([, path]) => path!);
      results.push({ text, files, there: files.map((file) => existsSync(file)) });
    });
    expect(await harness.run(request())).toMatchObject({ outcome: "succeeded", value: "done" });
    expect(results[1]!.text).toContain("Command timed out");
    for (const { files, there } of results) {
      expect(files).toHaveLength(1);
      expect(there).toEqual([true]);
      expect(existsSync(files[0]!), files[0]).toBe(false);
    }
  });

  test("is an extension's own when one the child loads registers bash (a sandbox of the user's): pi-flow does not replace it", async () => {
    mkdirSync(join(dir, ".pi", "extensions"), { recursive: true });
    writeFileSync(
      join(dir, ".pi", "extensions", "own-bash.ts"),
      [
        "export default function (pi) {",
        "  pi.registerTool({",
        '    name: "bash", label: "bash", description: "A sandboxed bash.",',
        '    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },',
        '    async execute() { return { content: [{ type: "text", text: "the sandbox ran it" }], details: undefined }; },',
        "  });",
        "}",
      ].join("\n"),
    );
    const results: string[] = [];
    const harness = await harnessRunning(["env -0 > env.txt"], (text) => results.push(text));
    expect(await harness.run(request(undefined, false))).toMatchObject({ outcome: "succeeded", value: "done" });
    expect(results).toEqual(["the sandbox ran it"]);
    expect(existsSync(join(dir, "env.txt"))).toBe(false);
  });

  test("an MCP tool its profile's disallowedTools names is not there even for a tool of its own that calls others (codemode's way)", async () => {
    // An MCP extension of the user's registers its server's tools for scripts only (exposure codemode),
    // and a script tool runs whatever tool it is asked to through ctx.executeTool.
    const marker = join(dir, "secret-read.txt");
    mkdirSync(join(dir, ".pi", "extensions"), { recursive: true });
    writeFileSync(
      join(dir, ".pi", "extensions", "mcp-and-script.ts"),
      [
        'import { writeFileSync } from "node:fs";',
        "export default function (pi) {",
        "  pi.registerTool({",
        '    name: "mcp__vault__read_secret", label: "read_secret", description: "Reads a secret.", exposure: "codemode",',
        '    parameters: { type: "object", properties: {} },',
        `    async execute() { writeFileSync(${JSON.stringify(marker)}, "read"); return { content: [{ type: "text", text: "hunter2" }], details: undefined }; },`,
        "  });",
        "  pi.registerTool({",
        '    name: "run_script", label: "run_script", description: "Runs a tool.",',
        '    parameters: { type: "object", properties: { tool: { type: "string" } }, required: ["tool"] },',
        "    async execute(id, params, signal, onUpdate, ctx) {",
        "      const outcome = await ctx.executeTool(params.tool, {});",
        '      return { content: [{ type: "text", text: outcome.isError ? "refused" : "ran" }], details: undefined };',
        "    },",
        "  });",
        "}",
      ].join("\n"),
    );
    const results: string[] = [];
    const harness = await harnessCalling([{ name: "run_script", args: { tool: "mcp__vault__read_secret" } }], (text) => results.push(text));
    const denied = request(undefined, false);
    denied.profile = { ...denied.profile, tools: ["read", "run_script"], disallowedTools: ["mcp__*"] };
    expect(await harness.run(denied)).toMatchObject({ outcome: "succeeded", value: "done" });
    expect(results).toEqual(["refused"]);
    expect(existsSync(marker)).toBe(false);
  });

  test("tells the child's extensions its session is over once it has settled, so what they started for it ends too", async () => {
    mkdirSync(join(dir, ".pi", "extensions"), { recursive: true });
    writeFileSync(
      join(dir, ".pi", "extensions", "cleanup.ts"),
      [
        'import { writeFileSync } from "node:fs";',
        "export default function (pi) {",
        '  pi.on("session_shutdown", (event, ctx) => writeFileSync(ctx.cwd + "/shutdown.txt", event.reason));',
        "}",
      ].join("\n"),
    );
    const harness = await harnessRunning([]);
    expect(await harness.run(request(undefined, false))).toMatchObject({ outcome: "succeeded", value: "done" });
    expect(readFileSync(join(dir, "shutdown.txt"), "utf8")).toBe("quit");
  });
});
