import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { CASSETTES, flowCommandLine, flowSandbox, PROJECT_ROOT, QUICKSTART, REVIEW_TARGET } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

/**
 * On a terminal, progress is one view redrawn in place. util-linux `script` gives the real flow
 * process a pseudo-terminal (sized, as a terminal window is) and records what it draws on stderr.
 */
test("on a terminal, progress is a live view redrawn in place: every child with its status, time and tokens", async () => {
  const flowArgs = ["run", "review", "--cwd", QUICKSTART, "--args", JSON.stringify({ target: REVIEW_TARGET }), "--replay", join(CASSETTES, "review.jsonl")];
  const command = `stty rows 40 cols 120; exec ${flowCommandLine(flowArgs)} 2>&1 >/dev/null`;
  const drawn = await new Promise<string>((resolve, reject) => {
    execFile("script", ["-qec", command, "/dev/null"], { cwd: PROJECT_ROOT, env: sandbox.env }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
  expect(drawn).toContain("\u001b[1A"); // cursor up…
  expect(drawn).toContain("\u001b[2K"); // …and erase: the view is redrawn, not appended to
  expect(drawn).not.toMatch(/^child 1 started:/m); // no plain event lines on a terminal
  const lastFrame = drawn.slice(drawn.lastIndexOf("review · wf_"));
  for (const description of ["Review correctness", "Review tests", "Review simplicity", "Synthesize the review"]) {
    expect(lastFrame).toMatch(new RegExp(`✓ ${description} +[0-9.]+s +\\d+ tokens +succeeded`));
  }
  expect(lastFrame).toMatch(/4 succeeded[\s\S]*run wf_\S+ succeeded in [0-9.]+s: 4 children, 0 failed agent\(\) calls/);
});
