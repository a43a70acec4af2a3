import { execFileSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, expect, test } from "vitest";
import { FAUX_EXTENSION, flowSandbox, journalOf, startedRunId, startFlow } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

/** Processes on this machine whose command line contains `marker`. */
const processesWith = (marker: string): string[] =>
  execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(marker) && !line.includes("ps -eo"));

test.each(["SIGINT", "SIGTERM"] as const)("%s during a run (Ctrl-C, or a supervisor stopping flow): the child and its commands are stopped, the journal says cancelled, exit 130", async (signal) => {
  // A unique sleep length marks the child's shell commands among this machine's processes: one in
  // the foreground, one that left the shell's process group, which the group's kill does not reach.
  const marker = `${4000 + randomInt(1000)}.${randomInt(100, 1000)}`;
  const command = `setsid sleep ${marker} > /dev/null 2>&1 < /dev/null & sleep ${marker}`;
  sandbox.fauxRules([{ match: "Run the slow command", tool: { name: "bash", arguments: { command } }, then: "done" }]);
  const script = sandbox.file(
    "slow.js",
    [
      "export const apiVersion = 1;",
      'export const meta = { name: "slow" };',
      'const run = await agent({ role: "worker", description: "Wait a while", prompt: "Run the slow command.", context: { mode: "none" } });',
      "return run.value;",
    ].join("\n"),
  );
  const running = startFlow(["run", script, "--cwd", sandbox.root, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION], { env: sandbox.env });
  await running.stderrLine(/^child 1 calling bash: Wait a while$/);
  // The tool call has started; wait until its command is really running, then interrupt.
  while (processesWith(marker).length < 2) await sleep(50);
  running.child.kill(signal);

  const result = await running.done;
  expect(result.stderr).toContain("interrupted: cancelling the run and its children");
  expect(result.stderr).toMatch(/^child 1 cancelled: Wait a while/m);
  expect(result.code).toBe(130);
  expect(result.stdout).toBe("");

  const journal = journalOf(sandbox, startedRunId(result.stderr));
  expect(journal.at(-1)).toMatchObject({ t: "terminal", outcome: "cancelled" });
  expect(journal.filter((line) => line.t === "child")).toEqual([expect.objectContaining({ outcome: "cancelled" })]);
  expect(processesWith(marker)).toEqual([]);
});
