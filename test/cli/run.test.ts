import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import { schemaViolation } from "../support/schema.ts";
import { flowInProcess } from "./in-process.ts";
import { CASSETTES, ECHO_EXTENSION, flow, flowSandbox, PROJECT_ROOT, journalOf, QUICKSTART, REVIEW_TARGET, runFileText, shell, startedRunId } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());
const env = sandbox.env;

const REVIEW_CASSETTE = join(CASSETTES, "review.jsonl");
const reviewArgs = (target: string, ...more: string[]) => ["run", "review", "--cwd", QUICKSTART, "--args", JSON.stringify({ target }), "--replay", REVIEW_CASSETTE, ...more];
const recordedAnswers = readFileSync(REVIEW_CASSETTE, "utf8")
  .trim()
  .split("\n")
  .slice(1)
  .map((line) => JSON.parse(line) as { key: { description: string }; answer: string });
const answerOf = (description: string) => recordedAnswers.find((entry) => entry.key.description === description)?.answer;

// One real flow process (stdout and stderr apart, exit code as a shell sees it); the rest run flow's main in-process.
describe("flow run --replay", () => {
  test("replays the shipped review: the value on stdout, one plain line per event on stderr, exit 0", async () => {
    const result = await flow(reviewArgs(REVIEW_TARGET), { env });
    expect(result.stderr).not.toContain("\u001b"); // not a terminal: no escape sequences, no redraws
    expect(result.code).toBe(0);

    const value = JSON.parse(result.stdout) as { target: string; reviews: { lens: string; verdict: string }[]; synthesis: { verdict: string } };
    expect(value.target).toBe(REVIEW_TARGET);
    expect(value.reviews.map((review) => [review.lens, review.verdict])).toEqual(
      ["correctness", "tests", "simplicity"].map((lens) => [lens, answerOf(`Review ${lens}`)]),
    );
    expect(value.synthesis.verdict).toBe(answerOf("Synthesize the review"));

    const lines = result.stderr.trimEnd().split("\n");
    const runId = startedRunId(result.stderr);
    expect(lines[0]).toBe(`run ${runId} started: review`);
    for (const [index, description] of ["Review correctness", "Review tests", "Review simplicity", "Synthesize the review"].entries()) {
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^child ${index + 1} started: ${description} \\(ag_[0-9a-z_]+\\)$`)));
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^child ${index + 1} succeeded: ${description} \\([0-9.]+s, \\d+ tokens\\)$`)));
    }
    expect(lines.at(-1)).toMatch(new RegExp(`^run ${runId} succeeded in [0-9.]+s: 4 children, 0 failed agent\\(\\) calls\\. Inspect it with: flow runs show ${runId} --cwd examples/quickstart$`));
    // The command waited for the group commit: the settled record is on disk, not only the journal.
    expect(JSON.parse(runFileText(sandbox, runId, "record.json"))).toMatchObject({ status: "done", outcome: "succeeded", children: { count: 4, failed: 0 } });
  });

  test("--json prints the whole contract receipt, which matches external_workflow's output schema", async () => {
    const result = await flowInProcess(reviewArgs(REVIEW_TARGET, "--json"), { env });
    expect(result.code).toBe(0);
    const receipt = JSON.parse(result.stdout) as { ok: boolean; data: { run: { task: unknown; children: unknown; output: { value: { synthesis: { verdict: string } } } } } };
    expect(schemaViolation(TOOL_SCHEMAS.external_workflow.output, receipt)).toBeNull();
    expect(receipt.ok).toBe(true);
    expect(receipt.data.run).toMatchObject({ task: { workflow: "review", source: "shipped" }, children: { count: 4, failed: 0 } });
    expect(receipt.data.run.output.value.synthesis.verdict).toBe(answerOf("Synthesize the review"));
  });

  test("a child with no matching answer fails naming its key and the nearest recorded one; the run exits 1", async () => {
    const result = await flowInProcess(reviewArgs("src/truncate.js"), { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    const failed = result.stderr.split("\n").find((line) => line.startsWith("child 1 failed: Review correctness"));
    expect(failed).toMatch(/has no answer for role:reviewer "Review correctness" #1 sha256:[0-9a-f]{16} \(strict replay\)\. Nearest recorded: role:reviewer "Review correctness" #1 sha256:[0-9a-f]{16}\./);
    expect(failed).toContain("--replay-mode loose");
    expect(result.stderr).toMatch(/^run wf_\S+ failed in [0-9.]+s: 3 children, 3 failed agent\(\) calls\./m);
    expect(result.stderr).toMatch(/flow: every reviewer failed: .* \(failed\)\n$/);
  });

  test("--replay-mode loose matches by role, description and occurrence, for a script whose prompts changed", async () => {
    const result = await flowInProcess(reviewArgs("src/truncate.js", "--replay-mode", "loose"), { env });
    expect(result.code).toBe(0);
    const value = JSON.parse(result.stdout) as { target: string; synthesis: { verdict: string } };
    expect(value).toMatchObject({ target: "src/truncate.js", synthesis: { verdict: answerOf("Synthesize the review") } });
  });
});

test("a script file's tools.* reach a tool an --extension registers, through the flow session's tool pipeline", async () => {
  const empty = sandbox.file("empty.jsonl", `${JSON.stringify({ format: "pi-flow-cassette", version: 1, illustrative: true, note: "no answers" })}\n`);
  const script = sandbox.file(
    "echo.js",
    'export const apiVersion = 1;\nexport const meta = { name: "echo", tools: ["flow_test_echo"] };\nconst echoed = await tools.flow_test_echo({ text: args.text });\nconst help = await tools.external_help({ topic: "limits" });\nreturn { echoed, helpOk: help.ok };\n',
  );
  const result = await flowInProcess(["run", script, "--args", '{"text":"hi"}', "--replay", empty, "--extension", ECHO_EXTENSION, "--cwd", sandbox.root], { env });
  expect(result.stderr).toMatch(/^run wf_\S+ succeeded in /m);
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toEqual({ echoed: { echoed: "hi" }, helpOk: true });
});

test("the user at the shell is the authority: flow run's children hold every tool their role asks for", async () => {
  const empty = sandbox.file("empty-tools.jsonl", `${JSON.stringify({ format: "pi-flow-cassette", version: 1, illustrative: true, note: "no answers" })}\n`);
  const script = sandbox.file(
    "tools.js",
    'export const apiVersion = 1;\nexport const meta = { name: "tools" };\ntry { await agent({ role: "worker", context: { mode: "none" }, prompt: "p" }); } catch (e) { return e.runId; }\nreturn null;\n',
  );
  const result = await flowInProcess(["run", script, "--replay", empty, "--cwd", sandbox.root], { env });
  expect(result.code).toBe(0);
  const [start] = journalOf(sandbox, JSON.parse(result.stdout) as string);
  expect((start as { launch: { tools: unknown } }).launch.tools).toEqual({ effective: ["read", "bash", "edit", "write", "grep", "find", "ls"], withheld: [], denied: [] });
});

test("text a run controls cannot drive the terminal: escape sequences in a description never reach flow's output", async () => {
  const empty = sandbox.file("empty-esc.jsonl", `${JSON.stringify({ format: "pi-flow-cassette", version: 1, illustrative: true, note: "no answers" })}\n`);
  const script = sandbox.file(
    "esc.js",
    'export const apiVersion = 1;\nexport const meta = { name: "esc" };\ntry { await agent({ role: "explorer", context: { mode: "none" }, prompt: "p", description: "ok\\u001b[2K\\r\\u001b]0;pwned\\u0007\\u009b2J FAKE: all good" }); } catch {}\nreturn 1;\n',
  );
  const result = await flowInProcess(["run", script, "--replay", empty, "--cwd", sandbox.root], { env });
  expect(result.code).toBe(0);
  expect(result.stderr).toContain("FAKE: all good");
  const runs = await flowInProcess(["runs", "--cwd", sandbox.root], { env });
  for (const text of [result.stderr, result.stdout, runs.stdout]) expect(text).not.toMatch(/[\u001b\u0007\u009b]/);
});

describe("exit code 2: the input is refused before anything launches", () => {
  const cassette = (name: string, text: string) => sandbox.file(name, text);
  const cases: [string, () => string[], string, RegExp][] = [
    ["--args that are not JSON", () => ["run", "review", "--args", "{nope", "--replay", REVIEW_CASSETTE], "request_invalid", /--args is not JSON/],
    ["--args typed without single quotes, so the shell took the JSON's double quotes", () => ["run", "review", "--args", "{target:src/}", "--replay", REVIEW_CASSETTE], "request_invalid", /^flow: --args is not JSON: [^\n]*\. A property name needs double quotes, and the shell removes them unless the JSON is in single quotes: --args '\{"name": "value"\}'\. \(request_invalid\)$/m],
    ["--args @ with a space before the file", () => ["run", "review", "--args", "@", "args.json", "--replay", REVIEW_CASSETTE], "request_invalid", /^flow: --args @ names no file: write the file's path right after the @, as --args @args\.json\. \(request_invalid\)$/m],
    ["a workflow named with --resume", () => ["run", "review", "--resume", "wf_0mx8jceeb_0084f73yd8"], "request_invalid", /^flow: --resume runs the run's own workflow: give no workflow with it \(flow run --resume wf_0mx8jceeb_0084f73yd8\)\. \(request_invalid\)$/m],
    ["an unknown flag", () => ["run", "review", "--frobnicate"], "request_invalid", /frobnicate[\s\S]*Usage: flow run/],
    ["a misspelt flag", () => ["run", "review", "--arg", "{}"], "request_invalid", /^flow: Unknown option '--arg'; did you mean --args\?\nUsage: flow run/m],
    ["a misspelt flag with its value joined", () => ["run", "review", "--replay-mod=loose"], "request_invalid", /^flow: Unknown option '--replay-mod'; did you mean --replay-mode\?\nUsage: flow run/m],
    ["no workflow", () => ["run"], "request_invalid", /Missing argument: the workflow to run \(a saved workflow's <name> or a <path\.js>\), or --resume <runId>\.\nUsage: flow run/],
    ["an unknown saved workflow", () => ["run", "no-such-flow", "--replay", REVIEW_CASSETTE], "selection_invalid", /Unknown workflow "no-such-flow"\. Saved workflows: handoff, map, parallel-edit, review/],
    ["a misspelt saved workflow", () => ["run", "reviw", "--replay", REVIEW_CASSETTE], "selection_invalid", /Unknown workflow "reviw"; did you mean review\? Saved workflows: handoff, map, parallel-edit, review/],
    ["an unknown saved workflow, with no model set up either", () => ["run", "no-such-flow"], "selection_invalid", /Unknown workflow "no-such-flow"\. Saved workflows: handoff, map, parallel-edit, review/],
    [
      "a script file with a syntax error",
      () => ["run", cassette("broken.js", "export const apiVersion = 1;\nexport const meta = { name: \"b\" };\nconst x = ;\n"), "--replay", REVIEW_CASSETTE],
      "script_invalid",
      /broken\.js:3:11: syntax error: Unexpected token/,
    ],
    ["a misspelt required arg", () => ["run", "review", "--args", '{"targt":"x"}', "--replay", REVIEW_CASSETTE], "request_invalid", /^flow: args\/target: missing \(args has "targt": a misspelling of target\?\); give it as --args '\{"target": "…"\}' \(request_invalid\)$/m],
    ["args that do not match meta.args", () => ["run", "review", "--args", '{"lenses":[]}', "--replay", REVIEW_CASSETTE], "request_invalid", /args/],
    ["a cassette that is not one", () => ["run", "review", "--replay", cassette("bad.jsonl", '{"hello":1}\n')], "configuration_invalid", /bad\.jsonl has 1 bad line .*\n  line 1: the first line must be the header \{"format":"pi-flow-cassette","version":1\}/],
    ["a script path with a typo", () => ["run", join(sandbox.root, "trage.js"), "--stub"], "request_invalid", /^flow: The script \S+\/trage\.js does not exist \(ENOENT\)\. \(request_invalid\)$/m],
    ["a saved workflow's name given as a file name", () => ["run", "review.js", "--stub"], "request_invalid", /^flow: The script \S+\/review\.js does not exist \(ENOENT\)\. review is a saved workflow: run it by name \(flow run review\)\. \(request_invalid\)$/m],
    ["a cassette that is missing", () => ["run", "review", "--replay", join(sandbox.root, "absent.jsonl")], "harness_unavailable", /absent\.jsonl does not exist \(ENOENT\)/],
    ["--stub with --replay", () => ["run", "review", "--stub", "--replay", REVIEW_CASSETTE], "request_invalid", /Give --stub or --replay, not both/],
    ["--stub with --model", () => ["run", "review", "--stub", "--model", "faux/faux-1"], "request_invalid", /--stub calls no model: give no --model with it/],
    ["--seed without --stub", () => ["run", "review", "--seed", "3"], "request_invalid", /--seed goes with --stub/],
    ["a --seed that is not a non-negative integer", () => ["run", "review", "--stub", "--seed", "1.5"], "request_invalid", /--seed must be a non-negative integer/],
    ["no model configured and no --replay", () => ["run", "review", "--args", JSON.stringify({ target: "x" })], "model_unavailable", /No model to run the children on/],
    ["a --model Pi does not know", () => ["run", "review", "--args", JSON.stringify({ target: "x" }), "--model", "nowhere/nothing"], "model_unavailable", /Model "nowhere\/nothing" is not known/],
    ["workflows turned off with PI_FLOW_WORKFLOWS=off", () => ["run", "review", "--replay", REVIEW_CASSETTE], "configuration_invalid", /PI_FLOW_WORKFLOWS=off/],
    ["an extension that does not load", () => ["run", "review", "--replay", REVIEW_CASSETTE, "--extension", join(sandbox.root, "absent-extension.ts")], "configuration_invalid", /extension failed to load/],
  ];

  test.each(cases)("%s", async (name, args, code, message) => {
    const result = await flowInProcess(args(), { env: name.includes("PI_FLOW_WORKFLOWS") ? { ...env, PI_FLOW_WORKFLOWS: "off" } : env });
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain(`(${code})`);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
  });

  test("--args that are not JSON are refused without quoting them: the quote could hold a cut secret", async () => {
    const key = "sk-ant-api03-Xy7Qp2Lm9Rt4Vn8Bc3Df6Gh1Jk5Mn0Pq7Rs2Tu9Vw4Xz8Ab3Cd6Ef1Gh5Ij0Kl7Mn2Op9Qr4St8Uv3Wx6Yz1-AbCdEfAA";
    for (const args of [`{"target": ${key}}`, `{"target": ${key.slice("sk-ant-api03-".length)}}`]) {
      const result = await flowInProcess(["run", "review", "--args", args, "--replay", REVIEW_CASSETTE, "--json"], { env });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--args is not JSON: (Unexpected token|Expected)/);
      for (const text of [result.stderr, result.stdout]) expect(text).not.toMatch(/Xy7Q|AbCdEfAA|Qp2Lm9/);
    }
  });

  test("a script file naming an unknown role literally is refused before any child runs, as flow check reports it", async () => {
    const file = sandbox.file("typo-role.js", 'export const apiVersion = 1;\nexport const meta = {};\nawait agent({ role: "explorer", prompt: "a" });\nawait agent({ role: "reveiwer", prompt: "b" });\n');
    const result = await flowInProcess(["run", file, "--stub", "--cwd", sandbox.root], { env });
    expect(result.stderr).toContain(`flow: ${file}:4:21: role: "reveiwer" is not a known role here (known: explorer, reviewer, worker) (script_invalid)`);
    expect(result.stderr).not.toMatch(/run wf_\S+ started/);
    expect(result.code).toBe(2);
  });

  test("a saved workflow run by name gets the same checks as its file run by path: a literal outputSchema that is no JSON Schema is refused before any child runs", async () => {
    const text = 'export const apiVersion = 1;\nexport const meta = {};\nawait agent({ role: "explorer", prompt: "a" });\nawait agent({ role: "explorer", prompt: "b", outputSchema: { type: "strin" } });\n';
    mkdirSync(join(sandbox.flowHome, "workflows"), { recursive: true });
    writeFileSync(join(sandbox.flowHome, "workflows", "bad-schema.js"), text);
    const file = sandbox.file("bad-schema.js", text);
    const byPath = await flowInProcess(["run", file, "--stub", "--cwd", sandbox.root], { env });
    const byName = await flowInProcess(["run", "bad-schema", "--stub", "--cwd", sandbox.root], { env });
    for (const [result, label] of [[byPath, file], [byName, "bad-schema.js"]] as const) {
      expect(result.stderr).toBe(`flow: ${label}:4:60: agent() outputSchema is not a usable JSON Schema: type must be equal to one of the allowed values (script_invalid)\n`);
      expect(result.stderr).not.toMatch(/run wf_\S+ started/);
      expect(result.code).toBe(2);
    }
  });

  test("a required argument left out says to pass it with --args, before any question of a model", async () => {
    const saved = await flowInProcess(["run", "review", "--cwd", QUICKSTART], { env });
    expect(saved.stderr).toBe(`flow: args/target: missing; give it as --args '{"target": "…"}' (request_invalid)\n`);
    expect(saved.code).toBe(2);
    const file = sandbox.file("needs.js", 'export const apiVersion = 1;\nexport const meta = { args: { type: "object", required: ["a", "b"], properties: { a: { type: "string" }, b: { type: "integer" } } } };\nreturn args;\n');
    const byPath = await flowInProcess(["run", file, "--stub", "--cwd", sandbox.root, "--args", '{"b": 1}'], { env });
    expect(byPath.stderr).toBe(`flow: args/a: missing; give it as --args '{"a": "…"}' (request_invalid)\n`);
    const neither = await flowInProcess(["run", file, "--stub", "--cwd", sandbox.root], { env });
    expect(neither.stderr).toBe(`flow: args/a: missing; give them as --args '{"a": "…", "b": …}' (request_invalid)\n`);
  });

  test("a syntax error shows its line and a caret under the message, the code on the message's line; by path or by saved name", async () => {
    const text = 'export const apiVersion = 1;\nexport const meta = { name: "typo" };\nconst x = { a: 1 b: 2 };\nreturn x;\n';
    const file = sandbox.file("typo.js", text);
    const byPath = await flowInProcess(["run", file, "--stub", "--cwd", sandbox.root], { env });
    expect(byPath.stderr).toBe(`flow: ${file}:3:18: syntax error: Unexpected token (script_invalid)\n    const x = { a: 1 b: 2 };\n                     ^\n`);
    expect(byPath.code).toBe(2);
    mkdirSync(join(sandbox.flowHome, "workflows"), { recursive: true });
    writeFileSync(join(sandbox.flowHome, "workflows", "typo.js"), text);
    const byName = await flowInProcess(["run", "typo", "--stub", "--cwd", sandbox.root], { env });
    expect(byName.stderr).toContain("flow: syntax error: Unexpected token (typo.js, line 3, column 18) (script_invalid)\n    const x = { a: 1 b: 2 };\n                     ^\n");
    expect(byName.code).toBe(2);
  });

  test("a saved name that is a script file beside it says to run the file by its path", async () => {
    sandbox.file("my-flow.js", 'export const apiVersion = 1;\nexport const meta = { description: "Mine" };\nreturn 1;\n');
    const here = await flowInProcess(["run", "my-flow", "--stub"], { cwd: sandbox.root, env });
    expect(here.code).toBe(2);
    expect(here.stderr).toMatch(/^flow: Unknown workflow "my-flow"\. Saved workflows: [^\n]*\. \.\/my-flow\.js is a script file: run it by its path \(flow run \.\/my-flow\.js\), or save it in \.pi\/flow\/workflows\/ to run it by name\. \(selection_invalid\)$/m);
    // In the project --cwd names, outside the shell's folder: the path is said whole.
    const there = await flowInProcess(["run", "my-flow", "--stub", "--cwd", sandbox.root], { cwd: PROJECT_ROOT, env });
    expect(there.code).toBe(2);
    const path = join(sandbox.root, "my-flow.js");
    expect(there.stderr).toContain(`${path} is a script file: run it by its path (flow run ${path})`);
  });

  test("the run-it-by-its-path hint, pasted into a shell, names the file as one argument when its folder has a space", async () => {
    const spaced = join(sandbox.root, "my project");
    mkdirSync(spaced, { recursive: true });
    writeFileSync(join(spaced, "mine.js"), 'export const apiVersion = 1;\nexport const meta = { description: "Mine" };\nreturn 1;\n');
    const result = await flowInProcess(["run", "mine", "--stub", "--cwd", spaced], { cwd: PROJECT_ROOT, env });
    expect(result.code).toBe(2);
    const hint = /\(flow run (.+?)\), or save it/.exec(result.stderr)?.[1] ?? "";
    const words = await shell(`printf '%s\\0' ${hint}`, { env });
    expect(words.stdout.split("\0").slice(0, -1)).toEqual([join(spaced, "mine.js")]);
  });

  test("with --json a refusal is still a receipt: ok false, the code, and no run", async () => {
    const result = await flowInProcess(["run", "no-such-flow", "--replay", REVIEW_CASSETTE, "--json"], { env });
    expect(result.code).toBe(2);
    const receipt = JSON.parse(result.stdout) as unknown;
    expect(schemaViolation(TOOL_SCHEMAS.external_workflow.output, receipt)).toBeNull();
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "selection_invalid" } });
  });
});
