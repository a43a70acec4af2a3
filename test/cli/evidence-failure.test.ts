import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { CASSETTES, FLOW_BIN, flowSandbox, PROJECT_ROOT, type FlowResult } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

/** `flow` in a shell whose files may not grow past 256 KiB (`ulimit -f`): a write past it fails with EFBIG, as on a full disk. */
function flowWithSmallFiles(args: readonly string[]): Promise<FlowResult> {
  const quoted = [process.execPath, FLOW_BIN, ...args].map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(" ");
  const child = spawn("bash", ["-c", `ulimit -f 256 && exec ${quoted}`], { cwd: PROJECT_ROOT, env: sandbox.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

test("a run whose evidence could not be written says so on stderr and in its exit code, and still prints its value", async () => {
  // 1 MB of output: its log outgrows the file size limit part-way through the run.
  const script = sandbox.file(
    "loud.js",
    'export const apiVersion = 1;\nexport const meta = { description: "Loud", limits: { outputChars: 4194304 } };\nfor (let i = 0; i < 1000; i++) console.log(`line ${i} ${"x".repeat(1000)}`);\nreturn { done: true };\n',
  );
  const result = await flowWithSmallFiles(["run", script, "--replay", join(CASSETTES, "review.jsonl")]);
  expect(JSON.parse(result.stdout)).toEqual({ done: true });
  expect(result.stderr).toMatch(/^flow: warning evidence_incomplete: .*could not all be saved \(.*EFBIG/m);
  expect(result.code).toBe(3);
});
