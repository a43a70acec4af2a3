import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { checkStructuredValue } from "../../src/harnesses/structured-answer.ts";
import { flowInProcess } from "./in-process.ts";
import { flowSandbox, journalOf, PROJECT_ROOT, runFileText, startedRunId } from "./support.ts";

// No faux model, no extension, no credentials: a new user's own workflow, tried with --stub.
const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

const finding = {
  type: "object",
  properties: { file: { type: "string", minLength: 1 }, line: { type: "integer", minimum: 1 }, severity: { enum: ["low", "medium", "high"] } },
  required: ["file", "line", "severity"],
  additionalProperties: false,
};
const verdictSchema = {
  type: "object",
  properties: {
    verdict: { enum: ["approve", "request_changes"] },
    score: { type: "integer", minimum: 1, maximum: 5 },
    findings: { type: "array", items: { $ref: "#/$defs/finding" }, minItems: 1 },
    reviewedAt: { type: "string", format: "date-time" },
  },
  required: ["verdict", "score", "findings", "reviewedAt"],
  additionalProperties: false,
  $defs: { finding },
};

const script = sandbox.file(
  "triage.js",
  `export const apiVersion = 1;
export const meta = { name: "triage", description: "Two reviews in parallel, then a merge step." };
const schema = ${JSON.stringify(verdictSchema)};
export default async function triage() {
  const reviews = await parallel(["api", "tests"].map((lens) => () =>
    agent({ role: "reviewer", description: "Review " + lens, prompt: "Review the " + lens + ".", outputSchema: schema })));
  const summary = await agent({ role: "explorer", description: "Summarize", prompt: "Summarize the reviews." });
  const worst = reviews.map((run) => run.value).sort((a, b) => a.score - b.score)[0];
  return { worst, blocking: reviews.filter((run) => run.value.verdict === "request_changes").length, summary: summary.output };
}
`,
);

type Triage = { worst: unknown; blocking: number; summary: string };

test("flow run of one's own script --stub runs with no model: schema-conforming values, the same for the same seed, marked stubbed", async () => {
  const first = await flowInProcess(["run", script, "--stub", "--seed", "5", "--cwd", sandbox.root], { env: sandbox.env });
  expect(first.stderr).toMatch(/^flow: --stub: no model is called; .*\(seed 5\)\.$/m);
  expect(first.stderr).toMatch(/^run wf_\S+ succeeded in .*: 3 children, 0 failed agent\(\) calls\. Stubbed: every answer was generated, no model was called\./m);
  expect(first.stderr).not.toContain("Its script wrote"); // it logs nothing, so no line says where its logs went
  expect(first.code).toBe(0);
  const value = JSON.parse(first.stdout) as Triage;
  expect(await checkStructuredValue(value.worst, verdictSchema)).toMatchObject({ ok: true });
  expect(value.summary).toBe('[stub] role:explorer "Summarize" #1: no model was called.');

  // The same seed again, with the whole receipt: the same value, and a warning no one can miss.
  const again = await flowInProcess(["run", script, "--stub", "--seed", "5", "--cwd", sandbox.root, "--json"], { env: sandbox.env });
  expect(again.code).toBe(0);
  const receipt = JSON.parse(again.stdout) as { ok: boolean; warnings: string[]; data: { run: { output: { value: Triage } } } };
  expect(receipt.warnings).toContain("stubbed");
  expect(receipt.data.run.output.value).toEqual(value);

  // The workflow's evidence says so, and each child's says it ran on the stub harness with no model.
  const rootDiagnostics = runFileText(sandbox, startedRunId(first.stderr), "diagnostics.log").trim().split("\n").map((line) => JSON.parse(line) as unknown);
  expect(rootDiagnostics).toContainEqual(expect.objectContaining({ level: "warn", code: "stubbed", message: expect.stringMatching(/^3 children were answered by the stub harness/) }));
  const child = journalOf(sandbox, startedRunId(first.stderr)).find((line) => line.t === "child") as { childRunId: string };
  const start = journalOf(sandbox, child.childRunId).find((line) => line.t === "start") as { task: unknown; launch: unknown };
  expect(start).toMatchObject({ task: { harness: "stub" }, launch: { harness: "stub", model: null } });
  expect(runFileText(sandbox, child.childRunId, "diagnostics.log")).toMatch(/warn \[stubbed\]: answered by the stub harness \(seed 5\): no model was called/);
});

test("a first workflow of one child says so in the singular, and where its console.log lines went", async () => {
  const one = sandbox.file("one.js", 'export const apiVersion = 1;\nexport const meta = { description: "One child." };\nconst run = await agent({ role: "explorer", description: "Look", prompt: "Look around." });\nconsole.log("looked:", run.output);\nreturn run.output;\n');
  const result = await flowInProcess(["run", one, "--stub", "--cwd", sandbox.root], { env: sandbox.env });
  expect(result.code).toBe(0);
  expect(result.stderr).toMatch(/^run wf_\S+ succeeded in .*: 1 child, 0 failed agent\(\) calls\. Stubbed: /m);
  // console.log goes to the run's output, not the terminal: the line after says how to read it, and that command shows it.
  const hint = /^Its script wrote to the run's output \(console\.log, text\(\)\), which is not printed here: flow (runs show \S+ --cwd \S+ --view output)$/m.exec(result.stderr)?.[1] ?? "";
  const shown = await flowInProcess(hint.split(" "), { env: sandbox.env });
  expect(shown.stdout).toContain('"text":"looked: [stub] role:explorer');
});

test("--stub --record writes a skeleton cassette that --replay answers from with the same value", async () => {
  const cassette = join(sandbox.root, "skeleton.jsonl");
  const recorded = await flowInProcess(["run", script, "--stub", "--record", cassette, "--cwd", sandbox.root], { env: sandbox.env });
  expect(recorded.code).toBe(0);
  const [header, ...entries] = readFileSync(cassette, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(header).toMatchObject({ format: "pi-flow-cassette", version: 1, illustrative: true, note: expect.stringMatching(/stub harness .*not said by a model/) });
  expect(entries).toHaveLength(3);
  for (const entry of entries) expect(entry).toMatchObject({ key: { agent: expect.stringMatching(/^role:/), occurrence: 1 }, outcome: "succeeded", source: "stub" });

  const replayed = await flowInProcess(["run", script, "--replay", cassette, "--cwd", sandbox.root], { env: sandbox.env });
  expect(replayed.stderr).not.toMatch(/has no answer/);
  expect(replayed.code).toBe(0);
  expect(JSON.parse(replayed.stdout)).toEqual(JSON.parse(recorded.stdout));
});

test("a minimal hand-written cassette replays in loose mode; strict replay says which lines need a promptHash", async () => {
  const answer = (severity: string, score: number) => ({ verdict: "request_changes", score, findings: [{ file: "src/a.ts", line: 3, severity }], reviewedAt: "2026-01-01T00:00:00Z" });
  const cassette = sandbox.file(
    "hand.jsonl",
    [
      { format: "pi-flow-cassette", version: 1 },
      { key: { agent: "role:reviewer", description: "Review api" }, answer: answer("high", 2) },
      { key: { agent: "role:reviewer", description: "Review tests" }, answer: answer("low", 4) },
      { key: { agent: "role:explorer", description: "Summarize" }, answer: "Two reviews, both ask for changes." },
    ]
      .map((line) => JSON.stringify(line))
      .join("\n"),
  );
  const loose = await flowInProcess(["run", script, "--replay", cassette, "--replay-mode", "loose", "--cwd", sandbox.root], { env: sandbox.env });
  expect(loose.code).toBe(0);
  expect(JSON.parse(loose.stdout)).toEqual({ worst: answer("high", 2), blocking: 2, summary: "Two reviews, both ask for changes." });

  const strict = await flowInProcess(["run", script, "--replay", cassette, "--cwd", sandbox.root], { env: sandbox.env });
  expect(strict.code).toBe(2);
  expect(strict.stderr).toMatch(/has 3 bad lines [^\n]*\n  line 2: key.promptHash is needed in strict replay [^\n]*--replay-mode loose\)\n  line 3: [^\n]*\n  line 4: /);
});

test("a cassette with three bad lines is refused naming all three, by flow run and by flow check", async () => {
  const cassette = sandbox.file(
    "bad.jsonl",
    [
      '{"format":"pi-flow-cassette","version":1}',
      '{"key":{"agent":"role:reviewer","description":"Review api"},"answr":{}}',
      '{"key":{"agent":"role:reviewer","description":"Review tests"},"answer":{},"outcome":"done"}',
      '{"key":{"description":"Summarize"},"answer":"ok",}',
    ].join("\n"),
  );
  const run = await flowInProcess(["run", script, "--replay", cassette, "--replay-mode", "loose", "--cwd", sandbox.root], { env: sandbox.env });
  expect(run.code).toBe(2);
  expect(run.stderr).toMatch(/^flow: Cassette \S+bad\.jsonl has 3 bad lines/m);
  expect(run.stderr).toMatch(/^  line 2: unknown field "answr" .*; answer is missing/m);
  expect(run.stderr).toMatch(/^  line 3: outcome must be succeeded, failed, timed_out/m);
  expect(run.stderr).toMatch(/^  line 4: not JSON/m);

  const check = await flowInProcess(["check", "--cassette", "bad.jsonl"], { cwd: sandbox.root, env: sandbox.env });
  expect(check.code).toBe(2);
  expect(check.stdout.trim().split("\n")).toEqual([
    expect.stringMatching(/^bad\.jsonl:2: unknown field "answr"/),
    expect.stringMatching(/^bad\.jsonl:3: outcome must be/),
    "bad.jsonl:4: not JSON",
  ]);
  expect(check.stderr).toMatch(/^flow check: 3 problems$/m);
});

test("docs/cli.md's minimal hand-written cassette is the example file its documented command replays", () => {
  const docs = readFileSync(join(PROJECT_ROOT, "docs", "cli.md"), "utf8");
  const block = /\*\*Writing one by hand\.\*\*[\s\S]*?```jsonl\n([\s\S]*?)```/.exec(docs)?.[1];
  expect(block).toBe(readFileSync(join(PROJECT_ROOT, "examples", "first-workflow", "answers.jsonl"), "utf8"));
  expect(docs).toContain("npx flow run examples/first-workflow/triage.js --replay examples/first-workflow/answers.jsonl --replay-mode loose\n");
});
