import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { CASSETTES, flowCommandLine, flowSandbox, shell, type FlowResult } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

/** `flow` in a shell whose files may not grow past 256 KiB (`ulimit -f`): a write past it fails with EFBIG, as on a full disk. */
const flowWithSmallFiles = (args: readonly string[]): Promise<FlowResult> => shell(`ulimit -f 256 && exec ${flowCommandLine(args)}`, { env: sandbox.env, bash: true });

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
