/**
 * A run record is a file any process of the user's can write, and a child prompted by a hostile
 * repository may. What `flow runs` prints of it in a shell must stay text: an outcome, kind, start
 * time, error code or harness forged with escape sequences writes neither the clipboard (OSC 52)
 * nor the terminal's title.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, expect, test } from "vitest";
import { openRunStore, RunRegistry, runFiles } from "../../src/runs/index.ts";
import { flowInProcess } from "./in-process.ts";
import { flowSandbox } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

const CLIPBOARD = "\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007";
const TITLE = "\u001b]0;owned-title\u0007";
const ESCAPES = /[\u001b\u0007\u009b\u009d]|Y3VybC|owned-title/;

test("flow runs and flow runs show print a record forged with escapes in its outcome, kind, start, error code and harness without them", async () => {
  const store = openRunStore({ home: sandbox.flowHome, cwd: sandbox.root, sessionId: "forged", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "Review", role: "explorer", harness: "codex" }, background: false });
  run.settle({ outcome: "failed", error: { code: "failed", message: "boom" } } as never);
  await store.idle();
  const path = runFiles(store.scope, run.runId).record;
  const record = JSON.parse(readFileSync(path, "utf8")) as { [key: string]: unknown; task: Record<string, unknown>; error: Record<string, unknown> };
  record.outcome = `failed${CLIPBOARD}`;
  record.kind = `agent${TITLE}`;
  record.startedAt = `${String(record.startedAt)}${CLIPBOARD}`;
  record.error.code = `failed${TITLE}`;
  record.task.harness = `codex${CLIPBOARD}`;
  writeFileSync(path, JSON.stringify(record));

  const listed = await flowInProcess(["runs", "--cwd", sandbox.root], { env: sandbox.env });
  expect(listed.code, listed.stderr).toBe(0);
  expect(listed.stdout).toContain(run.runId);
  const shown = await flowInProcess(["runs", "show", run.runId, "--cwd", sandbox.root], { env: sandbox.env });
  expect(shown.stdout).toContain(run.runId);
  for (const printed of [listed.stdout, listed.stderr, shown.stdout, shown.stderr]) expect(printed).not.toMatch(ESCAPES);
});
