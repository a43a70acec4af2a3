import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, test } from "vitest";
import { fakeRuns, isAlive, pathWithFakes, pidsOf, type FakeRunRecord } from "../support/fake-cli.ts";
import { FAUX_EXTENSION, flowSandbox, startFlow } from "../cli/support.ts";
import { CliWorkspace } from "./cli-support.ts";

let ws: CliWorkspace;
beforeEach(() => {
  ws = new CliWorkspace();
});
afterEach(() => ws.dispose());

/** Resolves once none of `pids` is alive: the process table is polled, the test's timeout bounds it. */
async function gone(pids: number[]): Promise<void> {
  while (pids.some(isAlive)) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("a stopped CLI child ends with everything it started", () => {
  test("a grandchild that called setsid (a session and group of its own) is ended too", async () => {
    const { result } = await ws.run("claude", { prompt: "[fake:setsid]", options: { killGraceMs: 300 }, onStarted: ({ cancel }) => cancel() });
    expect(result).toMatchObject({ outcome: "cancelled" });
    const [run] = fakeRuns(ws.cwd, "claude");
    expect(run!.children).toHaveLength(1);
    // By the time the child's run has settled, nothing it started is left.
    for (const pid of pidsOf(run!)) expect(isAlive(pid)).toBe(false);
  });

  test("a grandchild in a process group of its own that cleared its environment (no tag) is ended too: it is still in the child's session", async () => {
    const { result } = await ws.run("claude", { prompt: "[fake:untagged-group]", options: { killGraceMs: 300 }, onStarted: ({ cancel }) => cancel() });
    expect(result).toMatchObject({ outcome: "cancelled" });
    const [run] = fakeRuns(ws.cwd, "claude");
    expect(run!.children).toHaveLength(1);
    expect(run!.children![0]).toBeGreaterThan(0);
    for (const pid of pidsOf(run!)) expect(isAlive(pid), `process ${pid} still runs`).toBe(false);
  });
});

describe("children of a killed flow do not outlive it", () => {
  const sandbox = flowSandbox();
  afterAll(() => sandbox.dispose());

  test("kill -9 of flow run ends its claude child and the child's escaped grandchild", async () => {
    const script = sandbox.file(
      "on-claude.js",
      'export const apiVersion = 1;\nexport const meta = { description: "One claude child" };\nreturn await agent({ role: "worker", harness: "claude", prompt: "[fake:setsid]", description: "Hang on claude" });\n',
    );
    sandbox.fauxRules([]);
    const env = { ...sandbox.env, PATH: pathWithFakes(sandbox.env.PATH), PI_FLOW_CLI_KILL_GRACE_MS: "300" };
    // The faux model only stands for the session's model: the one child runs on the fake claude.
    const flow = startFlow(["run", script, "--cwd", sandbox.root, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION], { cwd: sandbox.root, env });
    let exited = false;
    void flow.done.then(() => (exited = true));
    let run: FakeRunRecord | undefined;
    while (!exited && !(run = fakeRuns(sandbox.root, "claude")[0])) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(run, (await Promise.race([flow.done, Promise.resolve(undefined)]))?.stderr).toBeDefined();
    if (!run) return;
    flow.child.kill("SIGKILL");
    expect((await flow.done).signal).toBe("SIGKILL");
    await gone(pidsOf(run));
    expect(readdirSync(join(sandbox.root, ".fake-cli"))).toHaveLength(1);
  });
});
