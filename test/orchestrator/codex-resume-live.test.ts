/**
 * codex continues a thread in place when it resumes (it cannot fork one), so a second resume of a
 * run is refused before launch while a first one is still live: in this process, and in another
 * process of this session (which the harness's in-process guard cannot see).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { expect, test } from "vitest";
import { resolveResume } from "../../src/orchestrator/child/resume-source.ts";
import { codeOf, messageOf, sandboxPerTest, type Sandbox } from "../runs/helpers.ts";
import { runFiles, type RunStore } from "../../src/runs/index.ts";

let box!: Sandbox;
let store!: RunStore;
sandboxPerTest((fresh, opened) => ((box = fresh), (store = opened)));

/** A settled codex child that recorded its CLI thread, as cli-harness.ts leaves one. */
function codexRun(harness = "codex"): string {
  const run = store.create({ kind: "agent", task: { description: "look", role: "explorer", harness }, background: false });
  run.appendDiagnostic({ level: "info", code: "cli_session", message: `${harness} session 0199aaaa-thread` });
  run.settle({ outcome: "succeeded", value: "done" });
  return run.runId;
}

test("a codex run being resumed is refused a second resume until the first ends, from this process and from another", async () => {
  const earlier = codexRun();
  const resuming = store.create({
    kind: "agent",
    task: { description: "look again", role: "explorer", harness: "codex", correlationId: earlier },
    launch: { harness: "codex", resume: earlier, prompt: "Go on." },
    background: true,
  });
  await store.idle();
  // Another process of this session reads the resume's record on disk; its owner is a process of
  // this host that is alive (this one's parent), as a resume another pi process runs would be.
  const record = runFiles(store.scope, resuming.runId).record;
  writeFileSync(record, JSON.stringify({ ...(JSON.parse(readFileSync(record, "utf8")) as object), owner: { pid: process.ppid, host: hostname() } }));
  const elsewhere = box.otherProcess();
  for (const runs of [store, elsewhere]) {
    expect(codeOf(() => resolveResume(earlier, runs))).toBe("request_invalid");
    expect(messageOf(() => resolveResume(earlier, runs))).toContain(`Run ${earlier} is being resumed right now by run ${resuming.runId}, which continues the same codex thread in place`);
  }

  resuming.settle({ outcome: "succeeded", value: "more" });
  await store.idle();
  for (const runs of [store, elsewhere]) expect(resolveResume(earlier, runs)).toMatchObject({ harness: "codex", cliSessionId: "0199aaaa-thread" });
});

test("a resume of a resume is refused while another resume of the same codex thread is live: both would write that one thread", async () => {
  const earlier = codexRun();
  // A first resume of it that settled: it continued, and recorded, the same thread.
  const first = store.create({
    kind: "agent",
    task: { description: "look again", role: "explorer", harness: "codex", correlationId: earlier },
    launch: { harness: "codex", resume: earlier, prompt: "Go on." },
    background: false,
  });
  first.appendDiagnostic({ level: "info", code: "cli_session", message: "codex session 0199aaaa-thread" });
  first.settle({ outcome: "succeeded", value: "more" });
  // A second resume of the earlier run, still live.
  const live = store.create({
    kind: "agent",
    task: { description: "and again", role: "explorer", harness: "codex", correlationId: earlier },
    launch: { harness: "codex", resume: earlier, prompt: "Go on still." },
    background: true,
  });
  await store.idle();
  expect(codeOf(() => resolveResume(first.runId, store))).toBe("request_invalid");
  expect(messageOf(() => resolveResume(first.runId, store))).toContain(`Run ${first.runId} is being resumed right now by run ${live.runId} (a resume of run ${earlier}), which continues the same codex thread in place`);
  live.settle({ outcome: "succeeded", value: "done" });
  await store.idle();
  expect(resolveResume(first.runId, store)).toMatchObject({ harness: "codex", cliSessionId: "0199aaaa-thread" });
});

test("a claude run, whose CLI forks the thread on resume, may be resumed while another resume of it runs", () => {
  const earlier = codexRun("claude");
  store.create({
    kind: "agent",
    task: { description: "look again", role: "explorer", harness: "claude", correlationId: earlier },
    launch: { harness: "claude", resume: earlier, prompt: "Go on." },
    background: true,
  });
  expect(resolveResume(earlier, store)).toMatchObject({ harness: "claude", cliSessionId: "0199aaaa-thread" });
});
