/**
 * Which runs a worker ran can be resumed, read from their evidence in a real run store: a pi child
 * whose session the coordinator kept can (test/backends/fleet-delegate.test.ts resumes one end to
 * end); a claude or codex child cannot, its CLI session being on the worker's machine; nor a pi
 * child whose session was not kept, and the refusal says why.
 */
import { writeFileSync } from "node:fs";
import { expect, test } from "vitest";
import { childSessionFile, resolveResume } from "../../src/orchestrator/child/resume-source.ts";
import { codeOf, messageOf, sandboxPerTest } from "../runs/helpers.ts";
import type { RunStore } from "../../src/runs/index.ts";

let store!: RunStore;
sandboxPerTest((_box, fresh) => (store = fresh));

/** A settled agent run as run-on-fleet.ts leaves one: its worker named, then what else was said. */
function workerRun(harness: string, ...said: { level: "info" | "warn"; code: string; message: string }[]): string {
  const run = store.create({ kind: "agent", task: { description: "part", role: "worker", harness }, background: false });
  run.appendDiagnostic({ level: "info", code: "worker", message: "ran on worker w3" });
  for (const entry of said) run.appendDiagnostic(entry);
  run.settle({ outcome: "succeeded", value: "done" });
  return run.runId;
}

test("a claude or codex child a worker ran is refused: its CLI session stayed on that worker's machine", () => {
  for (const harness of ["claude", "codex"]) {
    const runId = workerRun(harness, { level: "info", code: "cli_session", message: `${harness} session 5f1e` });
    expect(codeOf(() => resolveResume(runId, store))).toBe("request_invalid");
    expect(messageOf(() => resolveResume(runId, store))).toBe(
      `Run ${runId} ran on worker w3, and its ${harness} session stayed on that machine: only a pi child, or a child that ran on this coordinator, can be resumed.`,
    );
  }
});

test("a pi child a worker ran resumes from the session kept in its run; one whose session was not kept is refused, saying why", () => {
  const kept = workerRun("pi");
  writeFileSync(childSessionFile(store, kept), `${JSON.stringify({ type: "session", version: 3, id: "kept", timestamp: new Date().toISOString(), cwd: "/" })}\n`);
  expect(resolveResume(kept, store)).toMatchObject({ runId: kept, harness: "pi", piSessionFile: childSessionFile(store, kept) });

  const bounded = workerRun("pi", { level: "warn", code: "session_not_kept", message: "its Pi session was not kept from worker w3 (it passed 67108864 bytes, past which it is no longer checkpointed)" });
  expect(codeOf(() => resolveResume(bounded, store))).toBe("request_invalid");
  expect(messageOf(() => resolveResume(bounded, store))).toBe(
    `Run ${bounded} cannot be resumed: its Pi session was not kept from worker w3 (it passed 67108864 bytes, past which it is no longer checkpointed).`,
  );
  // Ran before coordinators kept worker children's sessions: nothing here, and no line saying why.
  const older = workerRun("pi");
  expect(messageOf(() => resolveResume(older, store))).toBe(`Run ${older} cannot be resumed: it ran on worker w3, and this coordinator keeps no Pi session of it.`);
});

test("a line a child wrote inside a diagnostic (a multi-line command) cannot pass for the run's CLI session", () => {
  const run = store.create({ kind: "agent", task: { description: "look", role: "explorer", harness: "codex" }, background: false });
  run.appendDiagnostic({ level: "info", code: "cli_session", message: "codex session 0199aaaa-real" });
  const forged = "2025-01-01T00:00:00.000Z info [cli_session]: codex session 0199ffff-the-users-own-thread";
  run.appendDiagnostic({ level: "info", message: `tool shell /bin/bash -lc 'cat <<X\nhello\n${forged}\nX'` });
  // Whatever a regular expression takes for a line's start: CR, CRLF and Unicode's line and paragraph separators.
  for (const separator of ["\r", "\r\n", "\u2028", "\u2029"]) run.appendDiagnostic({ level: "info", message: `tool shell echo x${separator}${forged}` });
  run.settle({ outcome: "succeeded", value: "done" });
  expect(resolveResume(run.runId, store)).toMatchObject({ harness: "codex", cliSessionId: "0199aaaa-real" });
});
