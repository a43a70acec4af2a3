import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { flowInProcess } from "./in-process.ts";
import { flowSandbox } from "./support.ts";

/**
 * flow run's own Pi session is named after the command line it was started with, `--args` left
 * out: the args are in the tool call, redacted string by string. The marker is no secret, so
 * redaction cannot be what keeps it out of the recorded line. Its first message, which children
 * with recent or full context see, states only the workflow and `--args <args>`.
 */
const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());
// Run by relative paths: a session's name is cut at a length, and where temporary folders live is not this test's to say.
sandbox.file("echo-args.js", 'export const apiVersion = 1;\nexport const meta = { description: "Echo its args" };\nreturn args;\n');

/** The session names and the texts of the "Ran from the shell" messages in every flow-session.jsonl under the Flow home. */
function recordedCommandLines(): { names: string[]; messages: string[] } {
  const files = readdirSync(sandbox.flowHome, { recursive: true, encoding: "utf8" }).filter((path) => path.endsWith("flow-session.jsonl"));
  const entries = files.flatMap((file) =>
    readFileSync(join(sandbox.flowHome, file), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; name?: string }),
  );
  return {
    names: entries.flatMap((entry) => (entry.type === "session_info" && entry.name !== undefined ? [entry.name] : [])),
    messages: entries.flatMap((entry) => /Ran from the shell: ([^"]*)/.exec(JSON.stringify(entry))?.[1] ?? []),
  };
}

test("the flow session records `--args <args>` (and `--args=<args>`), never the args' text", async () => {
  const spaced = await flowInProcess(["run", "echo-args.js", "--stub", "--cwd", ".", "--args", '{"marker":"ARGS-MARKER-7"}'], { cwd: sandbox.root, env: sandbox.env });
  expect(spaced.stderr).toMatch(/succeeded/);
  expect(JSON.parse(spaced.stdout)).toEqual({ marker: "ARGS-MARKER-7" });
  const joined = await flowInProcess(["run", "echo-args.js", "--stub", "--cwd", ".", '--args={"marker":"ARGS-MARKER-8"}'], { cwd: sandbox.root, env: sandbox.env });
  expect(joined.code, joined.stderr).toBe(0);
  const { names, messages } = recordedCommandLines();
  expect(names).toHaveLength(2);
  expect(names).toContainEqual(expect.stringMatching(/ --stub --cwd \S+ --args <args>$/));
  expect(names).toContainEqual(expect.stringMatching(/ --args=<args>$/));
  expect(messages).toEqual(["flow run echo-args.js --args <args>", "flow run echo-args.js --args <args>"]);
  expect([...names, ...messages].join("\n")).not.toContain("ARGS-MARKER");
});
