// What a `flow worker` does with one child request from the database: the child stays inside the
// worker's checkout, and the answer that goes back into the database is redacted like every record.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import type { ModelRegistry } from "@earendil-works/pi-coding-agent";
import type { RemoteChildRequest } from "../../src/backends/remote-child.ts";
import { runRemoteChild, type WorkerEnvironment } from "../../src/backends/worker-children.ts";
import { SteeringInbox } from "../../src/harnesses/steering.ts";

const secret = "sk-ant-api03-" + "Xq7Lp2Vn9Rt4Wb6Yc1Hd8Jf3Kg5Mz0Ns-AA";
const checkout = mkdtempSync(join(tmpdir(), "pi-flow-worker-"));
afterAll(() => rmSync(checkout, { recursive: true, force: true }));

const env: WorkerEnvironment = {
  cwd: checkout,
  agentDir: join(checkout, "agent"),
  registry: {} as ModelRegistry, // the stub harness asks the registry for nothing
  settings: { stub: { seed: 1, every: true } },
  name: "w1",
  projectTrusted: false,
};

function request(cwd: string): RemoteChildRequest {
  return {
    workflowId: "wf_1/agent/0",
    runId: "ag_1",
    harness: "pi",
    model: null,
    profile: { name: "explorer", description: "d", systemPrompt: "s", defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:explorer", description: "Part 1" },
    prompt: "Look.",
    cwd,
    loading: { projectTrusted: true, isolated: false },
    outputSchema: { type: "object", properties: { key: { const: secret } }, required: ["key"] },
  };
}

test("a worker's answer goes back into the database redacted", async () => {
  const answer = await runRemoteChild(request("."), env, new AbortController().signal);
  expect(answer.result.outcome).toBe("succeeded");
  expect(answer.worker).toBe("w1");
  expect(JSON.stringify(answer)).not.toContain(secret);
  expect(answer.result.value).toEqual({ key: expect.stringContaining("[REDACTED") });
});

test("a request naming a folder outside the worker's checkout fails the child and runs nothing", async () => {
  const outside = mkdtempSync(join(tmpdir(), "pi-flow-outside-"));
  afterAll(() => rmSync(outside, { recursive: true, force: true }));
  symlinkSync(outside, join(checkout, "esc")); // a link inside the checkout to a folder outside it
  for (const cwd of ["../elsewhere", "/etc", "esc", "esc/."]) {
    const answer = await runRemoteChild(request(cwd), env, new AbortController().signal);
    expect(answer.result).toMatchObject({ outcome: "failed", error: { code: "failed", message: expect.stringContaining("outside this worker's project") } });
  }
});

test("a folder inside the checkout whose name starts with .. is the checkout's, and its child runs there", async () => {
  mkdirSync(join(checkout, "..foo"));
  const answer = await runRemoteChild(request("..foo"), env, new AbortController().signal);
  expect(answer.result.outcome).toBe("succeeded");
});

test("a steer handed to a child its worker runs on a harness that takes no steers is refused and kept as undelivered, not dropped", async () => {
  const steering = new SteeringInbox();
  expect(steering.send("Also check the README.")).toBe(true); // taken from the database as the child started
  const answer = await runRemoteChild(request("."), env, new AbortController().signal, steering);
  expect(answer.result.outcome).toBe("succeeded");
  // The stub harness never read it: the worker puts it back for the coordinator to report.
  expect(steering.undelivered).toEqual(["Also check the README."]);
  expect(steering.send("And the docs.")).toBe(false);
});
