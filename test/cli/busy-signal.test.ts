import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { openRunStore } from "../../src/runs/index.ts";
import { flowSandbox, startFlow } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

test("SIGTERM while flow runs show pages a 16 MB launch record ends flow at once, mid-way", async () => {
  const project = join(sandbox.root, "project");
  mkdirSync(project);
  const store = openRunStore({ home: sandbox.flowHome, cwd: project, sessionId: "session-a" });
  const script = Array.from({ length: 16 * 1000 * 1000 / 32 }, (_, i) => `// line ${String(i).padStart(23, "0")}\n`).join("");
  const run = store.create({ kind: "workflow", task: { description: "big launch" }, background: false, launch: { script } });
  run.settle({ outcome: "succeeded", value: null });

  const shown = startFlow(["runs", "show", run.runId, "--view", "launch", "--cwd", project], { env: sandbox.env });
  // The first page is out: flow is mid-way through the record when the signal arrives.
  await shown.stdoutText(/^\{"script":"\/\/ line 0/);
  shown.child.kill("SIGTERM");
  const result = await shown.done;
  expect(result.signal).toBe("SIGTERM");
  expect(result.stdout.length).toBeLessThan(script.length);
}, 180_000); // writing the 16 MB record first takes a while on a busy machine
