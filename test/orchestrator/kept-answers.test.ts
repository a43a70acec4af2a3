// A tools.* answer is journaled so a resumed run answers the call without running it again. A large
// one (up to replyChars, 4 MiB, per call, for up to 256 calls) is kept in a file beside the journal,
// redacted, the journal line holding its size, hash and first characters: the journal stays small
// for every reader, and a resume still gives the script the whole answer.
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import type { LaunchEnvironment } from "../../src/orchestrator/child/index.ts";
import { planResume, type ResumePlan } from "../../src/orchestrator/workflow/resume/plan.ts";
import { parseSelected } from "../../src/orchestrator/workflow/sources.ts";
import { startWorkflow } from "../../src/orchestrator/workflow/start.ts";
import { runFiles, type RunStore } from "../../src/runs/index.ts";
import { workflowCalls } from "../../src/runs/read/calls.ts";
import { RunTree, type WorkflowHost } from "../../runtime/index.ts";
import { sandbox } from "../runs/helpers.ts";

const box = sandbox();
afterAll(() => box.cleanup());
const runs = box.store("s");

const SECRET = "sk-ant-api03-" + "Qw8Er4Ty6Ui2Op0As3Df5Gh7Jk9Lz1Xc".repeat(2);
/** About 150 KB of JSON: a listing a tool might return, with a key in it, shaped as a pi-flow receipt that failed. */
const LISTING = { contractVersion: 1, ok: false, error: { code: "failed", message: "the listing is partial" }, key: SECRET, lines: Array.from({ length: 5000 }, (_, index) => `entry ${index} of the listing`) };
const SCRIPT = `export const apiVersion = 1;
const listing = await tools.list({});
const next = await tools.next({});
return { count: listing.lines.length, last: listing.lines.at(-1), key: listing.key, next };
`;

/** A foreground run of SCRIPT with these tools; `resume` continues an earlier run. */
function start(tools: NonNullable<WorkflowHost["tools"]>, options: { signal?: AbortSignal; resume?: ResumePlan; script?: string } = {}) {
  const selected = { name: "inline", source: "inline" as const, label: "inline.js", text: options.script ?? SCRIPT };
  // Only what a script without agent() calls reads of its environment: where it runs and its store.
  const env = { cwd: box.project, runs } as Partial<LaunchEnvironment> as LaunchEnvironment;
  return startWorkflow({
    workflow: parseSelected(selected),
    selected,
    args: {},
    description: "lists",
    env,
    tools: () => tools,
    background: false,
    depth: 0,
    tree: { budget: new RunTree(), nested: false },
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.resume ? { resume: { plan: options.resume, replaySafe: new Set(["next"]) } } : {}),
  });
}

const journal = (store: RunStore, runId: string) =>
  readFileSync(runFiles(store.scope, runId).journal, "utf8")
    .trim()
    .split("\n")
    .map((line) => ({ bytes: Buffer.byteLength(line), line: JSON.parse(line) as { name?: string; data?: Record<string, unknown> } }));

/** A run cancelled while its second call waits: its first, large answer is in its evidence. */
async function interrupted(tools: NonNullable<WorkflowHost["tools"]> = { list: async () => LISTING }, script = SCRIPT): Promise<string> {
  const stop = new AbortController();
  const started = start({ ...tools, next: () => (stop.abort(), new Promise<never>(() => undefined)) }, { signal: stop.signal, script });
  const settled = await started.settled;
  expect(settled.view.state.outcome).toBe("cancelled");
  return started.runId;
}

test("a large tools.* answer is kept beside the journal, redacted, and the journal line holds its size and hash, not the answer", async () => {
  const runId = await interrupted();
  const result = journal(runs, runId).find(({ line }) => line.name === "tool_result")!;
  expect(result.bytes).toBeLessThan(4096);
  const kept = result.line.data!.kept as { file: string; chars: number; bytes: number; sha256: string; head: string };
  expect(kept).toMatchObject({ file: "tool-answer-0.json", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  expect(kept.chars).toBeGreaterThan(100_000);
  expect(kept.head).toMatch(/^\{"contractVersion":1,"ok":false,.*"key":"\S*REDACTED/);
  // The calls view still reads the receipt's facts from the line: the call failed, and why.
  expect(workflowCalls(runFiles(runs.scope, runId).journal, runId)[0]).toMatchObject({ kind: "tool", target: "list", status: "failed", error: { code: "failed", message: "the listing is partial" } });
  const file = join(runFiles(runs.scope, runId).dir, kept.file);
  expect(statSync(file).size).toBe(kept.bytes);
  const saved = readFileSync(file, "utf8");
  expect(saved).not.toContain(SECRET);
  expect((JSON.parse(saved) as typeof LISTING).lines).toEqual(LISTING.lines);
});

test("a resume gives the script the whole kept answer without calling the tool again, and a kept answer changed since fails the resume", async () => {
  const runId = await interrupted();
  let listed = 0;
  const tools = { list: async () => (listed++, LISTING), next: async () => "fresh" };
  const plan = planResume(runs, runId);
  if (!("plan" in plan)) throw new Error("the interrupted run should be resumable");
  const resumed = await start(tools, { resume: plan.plan }).settled;
  expect(resumed.view.state.outcome).toBe("succeeded");
  expect(resumed.value).toEqual({ count: 5000, last: "entry 4999 of the listing", key: expect.stringMatching(/REDACTED/), next: "fresh" });
  expect(listed).toBe(0);

  // The same size, other contents: not what the journal hashed.
  const file = join(runFiles(runs.scope, runId).dir, "tool-answer-0.json");
  writeFileSync(file, readFileSync(file, "utf8").replace("entry 1 ", "entry 7 "));
  const again = planResume(runs, runId);
  if (!("plan" in again)) throw new Error("the interrupted run should be resumable");
  const refused = await start(tools, { resume: again.plan }).settled;
  expect(refused.view.state.outcome).toBe("failed");
  expect(refused.view.state.error?.message).toMatch(/kept beside the journal \(tool-answer-0\.json\) is gone or changed since/);
  expect(listed).toBe(0);
});

test("a tool's failure is journaled as the script saw it, its message cut as the sandbox cuts it, and a resume shows the script the very same message", async () => {
  const script = `export const apiVersion = 1;
let seen;
try { await tools.fail({}); } catch (error) { seen = error.code + ": " + error.message; }
const next = await tools.next({});
return { seen, next };
`;
  // A megabyte of error text, as a tool that puts its whole output in its error might throw.
  const fail = async () => {
    throw Object.assign(new Error(`the build failed:\n${"warning: unused variable\n".repeat(40_000)}`), { code: "build_failed" });
  };
  const fresh = await start({ fail, next: async () => "fresh" }, { script }).settled;
  const runId = await interrupted({ fail }, script);
  const result = journal(runs, runId).find(({ line }) => line.name === "tool_result")!;
  expect(result.bytes).toBeLessThan(8192);
  expect(result.line.data).toMatchObject({ ok: false, code: "build_failed", messageChars: 1_000_018 });

  let failed = 0;
  const plan = planResume(runs, runId);
  if (!("plan" in plan)) throw new Error("the interrupted run should be resumable");
  const resumed = await start({ fail: async () => (failed++, null), next: async () => "fresh" }, { resume: plan.plan, script }).settled;
  expect(failed).toBe(0);
  expect(resumed.value).toEqual(fresh.value);
  expect((resumed.value as { seen: string }).seen).toMatch(/^build_failed: the build failed:\nwarning: unused variable\n[\s\S]*… \[\d+ more characters cut\]$/);
});

test("an answer past the most replyChars allows is refused to the script and its file keeps a marker and its head, not the answer; a resume shows the script the same refusal", async () => {
  const script = `export const apiVersion = 1;
let seen;
try { await tools.huge({}); } catch (error) { seen = error.code + ": " + error.message; }
const next = await tools.next({});
return { seen, next };
`;
  // 17 MiB of JSON, past the 16 MiB a run's replyChars may be set to: no script could ever be handed it.
  const answer = { key: SECRET, text: "a".repeat(17 * 1024 * 1024) };
  const answerChars = JSON.stringify(answer).length;
  const refusal = new RegExp(`^replyChars: .*the answer has ${answerChars} characters of JSON$`);
  // The script's view, as the run that kept the answer had it (the marker it kept never changes it).
  let seen = "";
  const runId = await interrupted({ huge: async () => answer, log: async (text) => void (seen = String(text)) }, script.replace("const next", "await tools.log(seen);\nconst next"));
  const result = journal(runs, runId).find(({ line }) => line.name === "tool_result")!;
  const kept = result.line.data!.kept as { file: string; bytes: number; cut: number; head: string };
  expect(kept).toMatchObject({ file: "tool-answer-0.json", cut: answerChars });
  expect(kept.head).toMatch(/^\{"key":"\S*REDACTED/);
  const file = join(runFiles(runs.scope, runId).dir, kept.file);
  expect(statSync(file).size).toBeLessThan(4096);
  const saved = JSON.parse(readFileSync(file, "utf8")) as { piFlowCutAnswer: { note: string; chars: number; head: string } };
  expect(saved.piFlowCutAnswer).toMatchObject({ chars: answerChars, head: kept.head });
  expect(saved.piFlowCutAnswer.note).toMatch(/more than a workflow's replyChars ever lets a script be handed/);
  expect(readFileSync(file, "utf8")).not.toContain(SECRET);
  // The calls view says what the script saw, not what the tool answered.
  expect(workflowCalls(runFiles(runs.scope, runId).journal, runId)[0]).toMatchObject({ target: "huge", status: "failed", error: { code: "replyChars", message: expect.stringContaining(`the answer has ${answerChars} characters of JSON`) } });

  let called = 0;
  const plan = planResume(runs, runId);
  if (!("plan" in plan)) throw new Error("the interrupted run should be resumable");
  const resumed = await start({ huge: async () => (called++, null), log: async () => null, next: async () => "fresh" }, { resume: plan.plan, script: script.replace("const next", "await tools.log(seen);\nconst next") }).settled;
  expect(called).toBe(0);
  expect(seen).toMatch(refusal);
  expect(resumed.value).toEqual({ seen, next: "fresh" });
});

test("an answer past 64 MiB is refused on a resume with the very words of the first run: the sandbox is told its length, not handed a string rebuilt to it", async () => {
  const script = `export const apiVersion = 1;
let seen;
try { await tools.huge({}); } catch (error) { seen = error.code + ": " + error.message; }
await tools.log(seen);
const next = await tools.next({});
return { seen, next };
`;
  // 65 MiB of JSON: a resume rebuilt at most 64 MiB, and told the script a size the tool never answered.
  const answer = "a".repeat(65 * 1024 * 1024);
  let seen = "";
  const runId = await interrupted({ huge: async () => answer, log: async (text) => void (seen = String(text)) }, script);
  const first = seen;
  expect(first).toMatch(new RegExp(`^replyChars: .*the answer has ${answer.length + 2} characters of JSON$`));
  const plan = planResume(runs, runId);
  if (!("plan" in plan)) throw new Error("the interrupted run should be resumable");
  const resumed = await start({ huge: async () => null, log: async (text) => void (seen = String(text)), next: async () => "fresh" }, { resume: plan.plan, script }).settled;
  expect(resumed.value).toEqual({ seen: first, next: "fresh" });
  // The resumed run keeps the answer as cut again, with its length: a resume of the resume says the same.
  const kept = journal(runs, resumed.view.runId).find(({ line }) => line.name === "tool_result")!.line.data!.kept;
  expect(kept).toMatchObject({ cut: answer.length + 2 });
});

test("an answer that is not JSON (a BigInt, a cycle) is journaled as the failure the script saw, and a resume shows the script the very same failure", async () => {
  const script = `export const apiVersion = 1;
let seen;
try { await tools.odd({}); } catch (error) { seen = error.code + ": " + error.message; }
await tools.log(seen);
const next = await tools.next({});
return { seen, next };
`;
  const cyclic: Record<string, unknown> = { name: "node" };
  cyclic.self = cyclic;
  for (const odd of [{ size: 10n }, cyclic]) {
    let seen = "";
    const runId = await interrupted({ odd: async () => odd, log: async (text) => void (seen = String(text)) }, script);
    expect(seen).toMatch(/^host_error: the host's answer must be JSON-serializable: /);
    const result = journal(runs, runId).find(({ line }) => line.name === "tool_result")!;
    expect(result.line.data).toMatchObject({ ok: false, code: "host_error", message: seen.slice("host_error: ".length) });

    let called = 0;
    const plan = planResume(runs, runId);
    if (!("plan" in plan)) throw new Error("the interrupted run should be resumable");
    const resumed = await start({ odd: async () => (called++, null), log: async () => null, next: async () => "fresh" }, { resume: plan.plan, script }).settled;
    expect(called).toBe(0);
    expect(resumed.value).toEqual({ seen, next: "fresh" });
  }
});

test("an answer nested past every valueDepth (100,000 levels) is refused to the script, journaled as only that, and a resume shows the script the same refusal", async () => {
  const script = `export const apiVersion = 1;
let seen;
try { await tools.deep({}); } catch (error) { seen = error.code + ": " + error.message; }
await tools.log(seen);
const next = await tools.next({});
return { seen, next };
`;
  let deep: unknown = "leaf";
  for (let i = 0; i < 100_000; i++) deep = [deep];
  let seen = "";
  const runId = await interrupted({ deep: async () => deep, log: async (text) => void (seen = String(text)) }, script);
  const first = seen;
  expect(first).toBe("valueDepth: value depth limit (100) reached: the answer nests deeper than 100 levels");
  const result = journal(runs, runId).find(({ line }) => line.name === "tool_result")!;
  expect(result.line.data).toMatchObject({ ok: true, deeperThan: 1000 });
  expect(result.bytes).toBeLessThan(1024);
  expect(workflowCalls(runFiles(runs.scope, runId).journal, runId)[0]).toMatchObject({ target: "deep", status: "failed", error: { code: "valueDepth", message: "value depth limit reached: the script was refused the answer" } });

  let called = 0;
  const plan = planResume(runs, runId);
  if (!("plan" in plan)) throw new Error("the interrupted run should be resumable");
  const resumed = await start({ deep: async () => (called++, null), log: async (text) => void (seen = String(text)), next: async () => "fresh" }, { resume: plan.plan, script }).settled;
  expect(called).toBe(0);
  expect(resumed.value).toEqual({ seen: first, next: "fresh" });
});

test("an answer whose toJSON answers differently each time it is read is journaled as the script saw it, small or kept in a file", async () => {
  const script = `export const apiVersion = 1;
const seen = [];
for (const name of ["small", "large", "late"]) {
  try { const answer = await tools[name]({}); seen.push(typeof answer === "string" ? answer : answer.reads); } catch (error) { seen.push(error.code + ": " + error.message); }
}
await tools.log(seen);
const next = await tools.next({});
return { seen, next };
`;
  /** An answer whose JSON changes with every read; the `late` one throws at its first read. */
  const fickle = (pad: number, throwsFirst = false) => {
    let reads = 0;
    return {
      toJSON() {
        reads++;
        if (throwsFirst && reads === 1) throw new Error("not ready yet");
        return pad === 0 ? `read ${reads}` : { reads, pad: "p".repeat(pad) };
      },
    };
  };
  let seen: unknown;
  const tools = { small: async () => fickle(0), large: async () => fickle(40_000), late: async () => fickle(0, true), log: async (value: unknown) => void (seen = value) };
  const runId = await interrupted(tools, script);
  expect(seen).toEqual(["read 1", 1, "host_error: the host's answer must be JSON-serializable: not ready yet"]);
  const results = journal(runs, runId).filter(({ line }) => line.name === "tool_result").map(({ line }) => line.data!);
  expect(results[0]).toMatchObject({ ok: true, value: "read 1" });
  const kept = results[1]!.kept as { file: string };
  expect((JSON.parse(readFileSync(join(runFiles(runs.scope, runId).dir, kept.file), "utf8")) as { reads: number }).reads).toBe(1);
  expect(results[2]).toMatchObject({ ok: false, code: "host_error", message: "the host's answer must be JSON-serializable: not ready yet" });

  const plan = planResume(runs, runId);
  if (!("plan" in plan)) throw new Error("the interrupted run should be resumable");
  const first = seen;
  const resumed = await start({ ...tools, next: async () => "fresh" }, { resume: plan.plan, script }).settled;
  expect(resumed.value).toEqual({ seen: first, next: "fresh" });
});

test("the calls view shows a tools.* answer over the run's replyChars as the failure the script saw, whether the journal line holds the answer or keeps it in a file", async () => {
  const script = `export const apiVersion = 1;
export const meta = { limits: { replyChars: 2000 } };
const seen = [];
for (const name of ["small", "inline", "kept"]) {
  try { await tools[name]({}); seen.push("ok"); } catch (error) { seen.push(error.code); }
}
return seen;
`;
  const settled = await start({ small: async () => "fits", inline: async () => "a".repeat(5000), kept: async () => "b".repeat(40_000) }, { script }).settled;
  expect(settled.value).toEqual(["ok", "replyChars", "replyChars"]);
  const calls = workflowCalls(runFiles(runs.scope, settled.view.runId).journal, settled.view.runId);
  expect(calls.map(({ target, status, error }) => ({ target, status, code: error?.code }))).toEqual([
    { target: "small", status: "succeeded", code: undefined },
    { target: "inline", status: "failed", code: "replyChars" },
    { target: "kept", status: "failed", code: "replyChars" },
  ]);
  expect(calls[1]!.error!.message).toMatch(/^reply size limit \(2000\) reached: the answer has 5002 characters of JSON$/);
});

test("the calls view shows an answer the script was handed as succeeded, even when redaction made its journaled copy longer than replyChars", async () => {
  const script = `export const apiVersion = 1;
export const meta = { limits: { replyChars: 2000 } };
const answer = await tools.config({});
return answer.length;
`;
  // 2000 characters of JSON, as the script is handed it; redacted for the journal, "password=[REDACTED]" is 3 longer.
  const answer = "password=hunter2 ".padEnd(1998, ".");
  const settled = await start({ config: async () => answer }, { script }).settled;
  expect(settled.value).toBe(1998);
  const calls = workflowCalls(runFiles(runs.scope, settled.view.runId).journal, settled.view.runId);
  expect(calls).toMatchObject([{ target: "config", status: "succeeded" }]);
  expect(calls[0]!.error).toBeUndefined();
});

test("the calls view of a run recorded before the launch details moved into the start line reads its replyChars from its launch.json", async () => {
  const script = `export const apiVersion = 1;
export const meta = { limits: { replyChars: 2000 } };
try { await tools.inline({}); return "handed"; } catch (error) { return error.code; }
`;
  const settled = await start({ inline: async () => "a".repeat(5000) }, { script }).settled;
  expect(settled.value).toBe("replyChars");
  const files = runFiles(runs.scope, settled.view.runId);
  // As an earlier pi-flow wrote it: no launch in the start line, a launch.json beside the journal.
  const [first, ...rest] = readFileSync(files.journal, "utf8").split("\n");
  const { launch, ...startLine } = JSON.parse(first!) as Record<string, unknown>;
  writeFileSync(files.journal, [JSON.stringify(startLine), ...rest].join("\n"));
  writeFileSync(join(files.dir, "launch.json"), `${JSON.stringify(launch, null, 2)}\n`);
  const [call] = workflowCalls(files.journal, settled.view.runId);
  expect(call).toMatchObject({ target: "inline", status: "failed", error: { code: "replyChars", message: "reply size limit (2000) reached: the answer has 5002 characters of JSON" } });
});
