import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, onTestFinished, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { flowInProcess } from "./in-process.ts";
import { FAUX_EXTENSION, flowSandbox, startedRunId, startFlow } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());
const env = sandbox.env;
const project = sandbox.root;
/** A cassette with no answers: scripts that start no child need no model under --replay. */
const emptyCassette = sandbox.file("empty.jsonl", `${JSON.stringify({ format: "pi-flow-cassette", version: 1, illustrative: true, note: "no answers" })}\n`);
const script = (name: string, body: string) => sandbox.file(`${name}.js`, `export const apiVersion = 1;\nexport const meta = { name: "${name}" };\n${body}\n`);
const runScript = (file: string, ...more: string[]) => flowInProcess(["run", file, "--cwd", project, "--replay", emptyCassette, ...more], { env });

describe("flow runs", () => {
  test("lists the project's runs from every session, newest first; show gives the summary", async () => {
    const first = await runScript(script("first", "return 1;"));
    const second = await runScript(script("second", 'console.log("hello from second"); return 2;'));
    expect([first.code, second.code]).toEqual([0, 0]);
    const [firstId, secondId] = [startedRunId(first.stderr), startedRunId(second.stderr)];

    const listed = await flowInProcess(["runs", "--cwd", project, "--json"], { env });
    expect(listed.code).toBe(0);
    const ids = (JSON.parse(listed.stdout) as RunView[]).map((view) => view.runId);
    expect(ids.indexOf(secondId)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(secondId)).toBeLessThan(ids.indexOf(firstId));

    const table = await flowInProcess(["runs", "--cwd", project], { env });
    const rows = table.stdout.trimEnd().split("\n");
    expect(rows.find((row) => row.startsWith(secondId))).toMatch(/workflow\s+succeeded\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+inline \(inline\): \S*second\.js$/);

    const summary = await flowInProcess(["runs", "show", secondId, "--cwd", project], { env });
    expect(summary.code).toBe(0);
    expect(summary.stdout).toMatch(new RegExp(`^${secondId} \\(workflow\\) "\\S*second\\.js" \\[workflow=inline source=inline\\]\\n  status: done succeeded`));
    expect(summary.stdout).toContain("result: 2");
    const output = await flowInProcess(["runs", "show", secondId, "--view", "output", "--cwd", project], { env });
    expect((JSON.parse(output.stdout) as { text: string }[]).map((message) => message.text)).toEqual(["hello from second\n"]);
  });

  test("show --view final pages a final over 16 KiB through to its end", async () => {
    const big = await runScript(script("big", 'return { rows: Array.from({ length: 400 }, (_, i) => ({ i, text: "row " + i + " " + "x".repeat(90) })) };'), "--json");
    expect(big.code).toBe(0);
    const receipt = JSON.parse(big.stdout) as { data: { run: RunView } };
    expect(receipt.data.run.output.delivery).toBe("reference");
    const shown = await flowInProcess(["runs", "show", receipt.data.run.runId, "--view", "final", "--cwd", project], { env });
    expect(shown.code).toBe(0);
    expect(Buffer.byteLength(shown.stdout)).toBeGreaterThan(40 * 1024);
    const { result } = JSON.parse(shown.stdout) as { result: { rows: { i: number; text: string }[] } };
    expect(result.rows).toHaveLength(400);
    expect(result.rows[399]).toEqual({ i: 399, text: `row 399 ${"x".repeat(90)}` });

    // Without --json, flow run itself prints the whole value, read back by reference.
    const plain = await runScript(script("big2", 'return "y".repeat(20000);'));
    expect(JSON.parse(plain.stdout)).toBe("y".repeat(20000));
  });

  test("an unknown run is refused with exit 2; so is a view that does not exist", async () => {
    const unknown = await flowInProcess(["runs", "show", "wf_000000000_aaaaaaaaaa", "--cwd", project], { env });
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining("(run_unavailable)")]);
    // It says where to look: this project's list, or another project's with --cwd.
    expect(unknown.stderr).toContain("flow runs lists this project's runs; --cwd names another project");
    const badView = await flowInProcess(["runs", "show", "wf_000000000_aaaaaaaaaa", "--view", "everything", "--cwd", project], { env });
    expect([badView.code, badView.stderr]).toEqual([2, expect.stringContaining("(request_invalid)")]);
  });

  test("a --cwd that is not a directory is named as such, not listed as a project with no runs yet", async () => {
    const missing = join(sandbox.root, "no-such-folder");
    const listed = await flowInProcess(["runs", "--cwd", missing], { env });
    expect([listed.code, listed.stderr]).toEqual([0, `No runs in ${missing}: it is not a directory (a mistyped --cwd?).\n`]);
  });
});

test("flow runs tail follows a live run's output from another process until it settles", async () => {
  const go = join(sandbox.root, "go");
  onTestFinished(() => writeFileSync(go, "")); // the child's wait ends even when the test fails or times out
  sandbox.fauxRules([{ match: "Wait for the go file", tool: { name: "bash", arguments: { command: `while [ ! -e ${go} ]; do sleep 0.1; done` } }, then: "went" }]);
  const file = script(
    "waits",
    [
      'console.log("before the child");',
      'const run = await agent({ role: "worker", description: "Wait for go", prompt: "Wait for the go file.", context: { mode: "none" } });',
      'console.log("after the child: " + run.value);',
      "return run.value;",
    ].join("\n"),
  );
  const running = startFlow(["run", file, "--cwd", project, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION], { env });
  const runId = startedRunId(await running.stderrLine(/^run wf_\S+ started/));
  await running.stderrLine(/^child 1 calling bash/);

  const tail = startFlow(["runs", "tail", runId, "--cwd", project], { env });
  expect(await tail.stdoutText(/before the child\n/)).toBe("before the child\n");
  writeFileSync(go, "");

  const [run, tailed] = await Promise.all([running.done, tail.done]);
  expect(run.code).toBe(0);
  expect(tailed.stdout).toBe("before the child\nafter the child: went\n");
  expect(tailed.stderr).toBe(`run ${runId} succeeded\n`);
  expect(tailed.code).toBe(0);
});
