import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { flowInProcess } from "./in-process.ts";
import { flowSandbox } from "./support.ts";

/**
 * flow run's own Pi session records the command line it was started with, `--args` left out: the
 * args are in the tool call, redacted string by string. The marker is no secret, so redaction
 * cannot be what keeps it out of the recorded line.
 */
const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());
const script = sandbox.file("echo-args.js", 'export const apiVersion = 1;\nexport const meta = { description: "Echo its args" };\nreturn args;\n');

/** The texts of the "Ran from the shell" messages in every flow-session.jsonl under the Flow home. */
function recordedCommandLines(): string[] {
  const files = readdirSync(sandbox.flowHome, { recursive: true, encoding: "utf8" }).filter((path) => path.endsWith("flow-session.jsonl"));
  return files.flatMap((file) =>
    readFileSync(join(sandbox.flowHome, file), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.stringify(JSON.parse(line)))
      .flatMap((line) => /Ran from the shell: ([^"]*)/.exec(line)?.[1] ?? []),
  );
}

test("the flow session records `--args <args>` (and `--args=<args>`), never the args' text", async () => {
  const spaced = await flowInProcess(["run", script, "--stub", "--cwd", sandbox.root, "--args", '{"marker":"ARGS-MARKER-7"}'], { env: sandbox.env });
  expect(spaced.stderr).toMatch(/succeeded/);
  expect(JSON.parse(spaced.stdout)).toEqual({ marker: "ARGS-MARKER-7" });
  const joined = await flowInProcess(["run", script, "--stub", "--cwd", sandbox.root, '--args={"marker":"ARGS-MARKER-8"}'], { env: sandbox.env });
  expect(joined.code, joined.stderr).toBe(0);
  const lines = recordedCommandLines();
  expect(lines).toHaveLength(2);
  expect(lines).toContainEqual(expect.stringMatching(/ --args <args>$/));
  expect(lines).toContainEqual(expect.stringMatching(/ --args=<args>$/));
  expect(lines.join("\n")).not.toContain("ARGS-MARKER");
});
