import { spawn, spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { flowInProcess } from "./in-process.ts";
import { FAUX_EXTENSION, FLOW_BIN, flowCommandLine, flowSandbox, PROJECT_ROOT, shell, type FlowResult } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());
const env = sandbox.env;

const SCRIPT = sandbox.file("one-child.js", 'export const apiVersion = 1;\nexport const meta = { description: "One greeting" };\nconst { value } = await agent({ role: "explorer", prompt: "Say hi", description: "Greet" });\nreturn { said: value };\n');

/**
 * `flow` under a 2 GB address-space cap (`ulimit -v`): a command that reads without bound runs out
 * of memory and crashes instead of growing the machine's swap; a bounded one answers as usual.
 * Without the WebAssembly trap handler, Node reserves no guard regions, so it starts under the cap.
 */
function cappedFlow(args: readonly string[]): Promise<FlowResult> {
  return shell(`ulimit -v 2000000 && exec ${flowCommandLine(args, ["--disable-wasm-trap-handler"])}`, { env });
}

function fifo(name: string): string {
  const path = join(sandbox.root, name);
  expect(spawnSync("mkfifo", [path]).status).toBe(0);
  return path;
}

describe("files named on flow's command line are bounded", () => {
  test.each([
    ["the script", ["run", "/dev/zero"], /The script \/dev\/zero is a device/],
    ["--args @file", ["run", SCRIPT, "--args", "@/dev/zero"], /The --args file \/dev\/zero is a device/],
    ["--replay", ["run", SCRIPT, "--replay", "/dev/zero"], /The cassette \/dev\/zero is a device/],
  ])("/dev/zero as %s is refused (exit 2) within bounded memory", async (_what, args, message) => {
    const result = await cappedFlow(args);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/\((request_invalid|configuration_invalid)\)$/m);
    expect(result.code).toBe(2);
  });

  test("a FIFO as the script, the --args file or the cassette is refused at once, never waited on", async () => {
    const pipe = fifo("pipe");
    for (const [args, what] of [
      [["run", pipe], "The script"],
      [["run", SCRIPT, "--args", `@${pipe}`], "The --args file"],
      [["run", SCRIPT, "--replay", pipe], "The cassette"],
    ] as const) {
      const result = await flowInProcess(args, { env });
      expect(result.stderr).toContain(`${what} ${pipe} is a FIFO: give a regular file.`);
      expect(result.code).toBe(2);
    }
  });

  test("flow check reports a FIFO or /dev/zero as a problem instead of waiting on it", async () => {
    const pipe = fifo("check-pipe");
    const result = await flowInProcess(["check", pipe, "/dev/zero"], { env });
    expect(result.stdout + result.stderr).toContain(`${pipe}:1:1: The script ${pipe} is a FIFO: give a regular file.`);
    expect(result.stdout + result.stderr).toContain("/dev/zero:1:1: The script /dev/zero is a device: give a regular file.");
    expect(result.code).toBe(2);
  });

  test("--args over 1 MiB is refused before anything launches", async () => {
    const big = sandbox.file("big-args.json", JSON.stringify({ text: "x".repeat(2 * 1024 * 1024) }));
    const result = await flowInProcess(["run", SCRIPT, "--args", `@${big}`, "--replay", join(sandbox.root, "none.jsonl")], { env });
    expect(result.stderr).toMatch(/The --args file .*big-args\.json is over 1 MiB \(1048576 bytes\), the most it may hold\. \(request_invalid\)/);
    expect(result.code).toBe(2);
    expect(existsSync(sandbox.flowHome)).toBe(false); // no run was created
  });

  test("a script file over 1 MiB is refused", async () => {
    const big = sandbox.file("big.js", `export const apiVersion = 1;\n// ${"x".repeat(1024 * 1024)}\nreturn 1;\n`);
    const result = await flowInProcess(["run", big], { env });
    expect(result.stderr).toMatch(/The script .*big\.js is over 1 MiB/);
    expect(result.code).toBe(2);
  });
});

describe("flow run --record writes only where it was asked to", () => {
  test("a symlink planted beside the target cannot redirect the recording into another file", async () => {
    sandbox.fauxRules([{ match: "Say hi", answer: "hi" }]);
    const dir = join(sandbox.root, "recordings");
    mkdirSync(dir);
    const victim = sandbox.file("victim.txt", "precious\n");
    const target = join(dir, "out.jsonl");
    const args = [FLOW_BIN, "run", SCRIPT, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION, "--record", target];
    const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    // The name an earlier flow staged its cassette under: the target's, with flow's process ID.
    symlinkSync(victim, join(dir, `.out.jsonl.${child.pid}.recording`));
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toContain("succeeded");
    expect(code).toBe(0);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    expect(lstatSync(target).isFile()).toBe(true);
    expect(readFileSync(target, "utf8")).toMatch(/^\{"format":"pi-flow-cassette"/);
    // Nothing staged is left behind; the planted link is untouched.
    expect(readdirSync(dir).sort()).toEqual([`.out.jsonl.${child.pid}.recording`, "out.jsonl"]);
  });

  test("a directory or FIFO as the --record target is refused before anything runs", async () => {
    const dir = join(sandbox.root, "a-folder");
    mkdirSync(dir);
    for (const target of [dir, fifo("record-pipe")]) {
      const before = readdirSync(sandbox.root).sort();
      const result = await flowInProcess(["run", SCRIPT, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION, "--record", target], { env });
      expect(result.stderr).toBe(`flow: The --record target ${target} is not a regular file: give a file path to write. (request_invalid)\n`);
      expect(result.code).toBe(2);
      expect(readdirSync(sandbox.root).sort()).toEqual(before);
    }
    writeFileSync(join(dir, "kept"), "");
    expect(readdirSync(dir)).toEqual(["kept"]);
  });
});
