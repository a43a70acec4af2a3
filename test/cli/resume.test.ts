/**
 * Durable work across a crash: a real `flow` process runs a workflow of N children on the faux
 * model and is killed with SIGKILL; a new `flow run --resume` process finishes it. The model is
 * asked only for the children the journal had not settled, and the value is the one an
 * uninterrupted run computes.
 */
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { flowInProcess } from "./in-process.ts";
import { FAUX_EXTENSION, flowSandbox, journalOf, startFlow, startedRunId, type FlowResult } from "./support.ts";

const N = 6;
const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

// Each prompt embeds a random token and the value the clock: both must replay exactly.
const SCRIPT = [
  "export const apiVersion = 1;",
  'export const meta = { name: "steps" };',
  'store("r", Math.random());',
  "const out = [];",
  `for (let i = 1; i <= ${N}; i++) {`,
  '  const token = Math.floor(Math.random() * 1e9);',
  '  const r = await agent({ role: "worker", description: "step " + i, prompt: "Do step " + i + " with token " + token + ".", context: { mode: "none" } });',
  "  out.push(r.value);",
  "}",
  'return { out, r: load("r"), t: new Date().toISOString() };',
].join("\n");

let script = "";
const go = join(sandbox.root, "go");
let requests = 0;
beforeAll(() => {
  script = sandbox.file("steps.js", SCRIPT);
  // Step 5 answers only while the go file exists: a run killed before it cannot finish first.
  sandbox.fauxRules(Array.from({ length: N }, (_, i) => ({ match: `Do step ${i + 1} `, answer: `answer ${i + 1}`, ...(i + 1 === 5 ? { waitFor: go } : {}) })));
  writeFileSync(go, "");
});

/** A flow command that logs each model request to its own file; returns the requests asked. */
function logged(): { env: NodeJS.ProcessEnv; asked(): string[] } {
  const log = join(sandbox.root, `requests-${++requests}.log`);
  return {
    env: { ...sandbox.env, FLOW_FAUX_LOG: log },
    asked: () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter((line) => line.includes("Do step")) : []),
  };
}

const RUN_FLAGS = ["--cwd", sandbox.root, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION];

/** Starts the workflow and SIGKILLs its process once stderr shows `killAt`; returns the run ID. */
async function runAndKill(killAt: RegExp): Promise<string> {
  const { env } = logged();
  rmSync(go, { force: true });
  onTestFinished(() => writeFileSync(go, "")); // a held child is let go whatever happens
  const running = startFlow(["run", script, ...RUN_FLAGS], { env });
  await running.stderrLine(killAt);
  running.child.kill("SIGKILL");
  const result = await running.done;
  writeFileSync(go, "");
  expect(result.signal).toBe("SIGKILL");
  return startedRunId(result.stderr);
}

const valueOf = (result: FlowResult) => JSON.parse(result.stdout) as { out: string[]; r: number; t: string };
const settledChildren = (runId: string) => journalOf(sandbox, runId).filter((line) => line.t === "child" && line.outcome === "succeeded").length;
/** How the closing line counts replayed calls: "1 call replayed", "3 calls replayed". */
const callsReplayed = (count: number) => `${count} call${count === 1 ? "" : "s"} replayed`;

describe("flow run --resume after SIGKILL", () => {
  let uninterrupted: { out: string[] };
  beforeAll(async () => {
    const { env, asked } = logged();
    const result = await flowInProcess(["run", script, ...RUN_FLAGS], { env });
    expect(result.code).toBe(0);
    expect(asked()).toHaveLength(N);
    uninterrupted = valueOf(result);
  });

  test.each([
    ["before any child settled", /^child 1 started/, false],
    ["after 4 children settled", /^child 4 succeeded/, false],
    ["mid-way through a journal write, after 2 settled", /^child 2 succeeded/, true],
  ])("killed %s: the model is asked only for the rest, and the value is an uninterrupted run's", async (_when, killAt, torn) => {
    const runId = await runAndKill(killAt);
    const journal = journalOf(sandbox, runId);
    expect(journal.some((line) => line.t === "terminal")).toBe(false);
    const settled = settledChildren(runId);
    if (torn) {
      // A write the kill cut short: the start of a line with no end.
      const path = journalPath(runId);
      appendFileSync(path, `{"v":1,"seq":${journal.length},"runId":"${runId}","at":"2026-`);
    }

    const { env, asked } = logged();
    const resumed = await flowInProcess(["run", "--resume", runId, ...RUN_FLAGS], { env });
    expect(resumed.stderr).toMatch(new RegExp(`run (wf_\\S+) started: resume of ${runId}`));
    expect(resumed.code).toBe(0);
    // n − k more requests: every child the journal had settled is answered from it.
    expect(asked()).toHaveLength(N - settled);
    expect(asked().every((line) => Number(/Do step (\d)/.exec(line)?.[1]) > settled)).toBe(true);

    const value = valueOf(resumed);
    expect(value.out).toEqual(uninterrupted.out);
    // The clock and the random sequence are the interrupted run's own.
    const replay = journal.find((line) => line.t === "event" && line.name === "replay") as { data: { startedAt: number } };
    const stored = journal.find((line) => line.t === "store" && line.key === "r") as { value: number };
    expect(value.r).toBe(stored.value);
    expect(value.t).toBe(new Date(replay.data.startedAt).toISOString());
    expect(resumed.stderr).toContain(`: ${N} children, 0 failed agent() calls (${callsReplayed(settled)} from ${runId}, ${N - settled} live)`);

    // The resumed run succeeded: resuming it again runs nothing and returns its value.
    const resumedId = startedRunId(resumed.stderr);
    const again = logged();
    const receipt = await flowInProcess(["run", "--resume", resumedId, "--json", ...RUN_FLAGS], { env: again.env });
    expect(receipt.code).toBe(0);
    expect(again.asked()).toHaveLength(0);
    expect(JSON.parse(receipt.stdout)).toMatchObject({
      ok: true,
      data: { run: { runId: resumedId, task: { resumedFrom: runId }, children: { count: N, replayed: settled, live: N - settled } } },
    });
  });
});

test("a settled child whose evidence was pruned since runs live again; the others are still replayed", async () => {
  const runId = await runAndKill(/^child 2 succeeded/);
  const settled = settledChildren(runId);
  const first = journalOf(sandbox, runId).find((line) => line.t === "event" && line.name === "agent_start") as { data: { childRunId: string } };
  rmSync(dirname(journalPath(first.data.childRunId)), { recursive: true });

  const { env, asked } = logged();
  const resumed = await flowInProcess(["run", "--resume", runId, ...RUN_FLAGS], { env });
  expect(resumed.code).toBe(0);
  expect(asked()).toHaveLength(N - settled + 1);
  expect(asked()[0]).toContain("Do step 1 ");
  expect(resumed.stderr).toContain(`(${callsReplayed(settled - 1)} from ${runId}, ${N - settled + 1} live)`);
});

test("a child killed as its Pi session file was made, before anything was in it, runs afresh", async () => {
  const runId = await runAndKill(/^child 1 started/);
  const settled = settledChildren(runId);
  const first = journalOf(sandbox, runId).find((line) => line.t === "event" && line.name === "agent_start") as { data: { childRunId: string } };
  // A SIGKILL between the file's creation and its first write leaves it empty.
  writeFileSync(join(dirname(journalPath(first.data.childRunId)), "session.jsonl"), "");

  const { env, asked } = logged();
  const resumed = await flowInProcess(["run", "--resume", runId, ...RUN_FLAGS], { env });
  expect(resumed.code).toBe(0);
  expect(asked()).toHaveLength(N - settled);
  expect(asked()[0]).toContain("Do step 1 ");
  expect(valueOf(resumed).out).toEqual(Array.from({ length: N }, (_, i) => `answer ${i + 1}`));
});

test("flow run --resume with a script or --args is refused before anything starts (exit 2)", async () => {
  const both = await flowInProcess(["run", script, "--resume", "wf_0mx1xga91_abcdefghij", ...RUN_FLAGS], { env: sandbox.env });
  expect(both.code).toBe(2);
  expect(both.stderr).toContain("--resume runs the run's own workflow: give no workflow with it");
  const args = await flowInProcess(["run", "--resume", "wf_0mx1xga91_abcdefghij", "--args", "{}", ...RUN_FLAGS], { env: sandbox.env });
  expect(args.code).toBe(2);
  expect(args.stderr).toContain("--resume runs the run's own args");
  const unknown = await flowInProcess(["run", "--resume", "wf_0mx1xga91_abcdefghij", ...RUN_FLAGS], { env: sandbox.env });
  expect(unknown.stderr).toContain("run_unavailable");
});

function journalPath(runId: string): string {
  const projects = join(sandbox.flowHome, "projects");
  for (const project of readdirSync(projects)) {
    for (const session of readdirSync(join(projects, project, "sessions"))) {
      const path = join(projects, project, "sessions", session, "runs", runId, "journal.jsonl");
      if (existsSync(path)) return path;
    }
  }
  throw new Error(`no journal for ${runId}`);
}

test("flow run --resume of a run that succeeded with a value too large to go inline prints that value, and runs nothing", async () => {
  const big = sandbox.file("big.js", 'export const apiVersion = 1;\nexport const meta = { name: "big" };\nreturn { rows: Array.from({ length: 2000 }, (_, i) => "row " + i + " " + "x".repeat(10)) };');
  const first = await flowInProcess(["run", big, "--json", ...RUN_FLAGS], { env: sandbox.env });
  expect(first.code).toBe(0);
  const envelope = JSON.parse(first.stdout) as { data: { run: { runId: string; output: { delivery: string } } } };
  expect(envelope.data.run.output.delivery).toBe("reference");
  const { env, asked } = logged();
  const again = await flowInProcess(["run", "--resume", envelope.data.run.runId, ...RUN_FLAGS], { env });
  expect(again.code).toBe(0);
  const value = JSON.parse(again.stdout) as { rows: string[] };
  expect(value.rows).toHaveLength(2000);
  expect(value.rows[1999]).toBe(`row 1999 ${"x".repeat(10)}`);
  expect(asked()).toEqual([]);
});

test("flow run --resume with no model says what the named run allows: a succeeded run's value, a failed run's refusal, an unknown run", async () => {
  // No --model and no --extension: this sandbox's Pi has no model at all.
  const noModel = ["--cwd", sandbox.root];
  const ok = sandbox.file("ok.js", 'export const apiVersion = 1;\nexport const meta = { name: "ok" };\nreturn { done: true };');
  const first = await flowInProcess(["run", ok, "--stub", ...noModel], { env: sandbox.env });
  expect(first.code).toBe(0);
  const again = await flowInProcess(["run", "--resume", startedRunId(first.stderr), ...noModel], { env: sandbox.env });
  expect(again.stderr).not.toContain("model_unavailable");
  expect(again.code).toBe(0);
  expect(JSON.parse(again.stdout)).toEqual({ done: true });

  const bad = sandbox.file("bad.js", 'export const apiVersion = 1;\nexport const meta = { name: "bad" };\nthrow new Error("no");');
  const failed = await flowInProcess(["run", bad, "--stub", ...noModel], { env: sandbox.env });
  expect(failed.code).toBe(1);
  const refused = await flowInProcess(["run", "--resume", startedRunId(failed.stderr), ...noModel], { env: sandbox.env });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain("resuming it would replay the same failure");
  expect(refused.stderr).toContain("(request_invalid)");

  const unknown = await flowInProcess(["run", "--resume", "wf_0mx1xga91_abcdefghij", ...noModel], { env: sandbox.env });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("(run_unavailable)");
});
