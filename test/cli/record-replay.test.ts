import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { flowInProcess } from "./in-process.ts";
import { FAUX_EXTENSION, flowSandbox, journalOf, QUICKSTART, startedRunId, withoutRunIds } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

const mapArgs = JSON.stringify({
  items: ["src/slugify.js", "src/truncate.js", "README.md"],
  prompt: "Read {{item}}. Name what it exports.",
  concurrency: 2,
  outputSchema: { type: "object", properties: { exports: { type: "array", items: { type: "string" } } }, required: ["exports"] },
});

/** index → outcome of every child, from the workflow's journal. */
function childOutcomes(runId: string): Record<number, unknown> {
  const outcomes: Record<number, unknown> = {};
  for (const line of journalOf(sandbox, runId)) {
    if (line.t === "child") outcomes[(line.data as { index: number }).index] = line.outcome;
  }
  return outcomes;
}

test("record with a model, then replay with none: the same value and the same child outcomes", async () => {
  // The faux provider answers two items as the schema asks and the third with prose, which fails it.
  sandbox.fauxRules([
    { match: "Read src/slugify.js.", answer: '{"exports":["slugify"]}' },
    { match: "Read src/truncate.js.", answer: '{"exports":["truncate"]}' },
    { match: "Read README.md.", answer: "It is a README; it exports nothing." },
  ]);
  const cassette = join(sandbox.root, "map.jsonl");
  const common = ["run", "map", "--cwd", QUICKSTART, "--args", mapArgs];
  const recorded = await flowInProcess([...common, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION, "--record", cassette], { env: sandbox.env });
  expect(recorded.stderr).toMatch(/^child \d failed: Map item 3: README\.md .*does not satisfy|^child \d failed: Map item 3: README\.md .*not JSON/m);
  expect(recorded.code).toBe(0);

  const lines = readFileSync(cassette, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines[0]).toMatchObject({ format: "pi-flow-cassette", version: 1, illustrative: false });
  expect(lines.slice(1)).toHaveLength(3);
  for (const entry of lines.slice(1)) {
    expect(entry).toMatchObject({
      key: { agent: "role:explorer", description: expect.stringMatching(/^Map item \d: /), occurrence: 1, promptHash: expect.stringMatching(/^sha256:[0-9a-f]{16}$/) },
      usage: { turns: 1 },
      timing: { startedAt: expect.any(String), durationMs: expect.any(Number) },
    });
  }
  const entries = lines.slice(1);
  const readme = entries.find((entry) => (entry.key as { description: string }).description === "Map item 3: README.md");
  expect(readme).toMatchObject({ outcome: "failed", error: { code: "failed", message: expect.stringMatching(/JSON|outputSchema/) } });
  expect(entries.find((entry) => (entry.key as { description: string }).description === "Map item 1: src/slugify.js")).toMatchObject({
    outcome: "succeeded",
    answer: { exports: ["slugify"] },
  });

  // No model, no extension, no credentials: the cassette answers.
  const replayed = await flowInProcess([...common, "--replay", cassette], { env: sandbox.env });
  expect(replayed.code).toBe(0);
  expect(withoutRunIds(JSON.parse(replayed.stdout))).toEqual(withoutRunIds(JSON.parse(recorded.stdout)));
  const value = JSON.parse(replayed.stdout) as { results: { item: string; ok: boolean }[]; failed: number };
  expect(value.results.map((result) => [result.item, result.ok])).toEqual([["src/slugify.js", true], ["src/truncate.js", true], ["README.md", false]]);
  expect(childOutcomes(startedRunId(replayed.stderr))).toEqual(childOutcomes(startedRunId(recorded.stderr)));
  expect(Object.values(childOutcomes(startedRunId(replayed.stderr))).sort()).toEqual(["failed", "succeeded", "succeeded"]);
});

test("a replayed prompt that quotes run IDs and capture times still matches: handoff's evidence packet", async () => {
  sandbox.fauxRules([
    { match: "Collect the call sites", answer: "src/a.ts:1 parseConfig()" },
    { match: "Judge the call sites", answer: "approve" },
  ]);
  const cassette = join(sandbox.root, "handoff.jsonl");
  const args = JSON.stringify({ collectPrompt: "Collect the call sites.", reviewPrompt: "Judge the call sites." });
  const common = ["run", "handoff", "--cwd", QUICKSTART, "--args", args];
  const recorded = await flowInProcess([...common, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION, "--record", cassette], { env: sandbox.env });
  expect(recorded.code).toBe(0);
  const replayed = await flowInProcess([...common, "--replay", cassette], { env: sandbox.env });
  expect(replayed.stderr).not.toMatch(/has no answer/);
  expect(replayed.code).toBe(0);
  expect(withoutRunIds(JSON.parse(replayed.stdout))).toEqual(withoutRunIds(JSON.parse(recorded.stdout)));
});

test("a worker child sees the parent conversation, yet replays strictly what a run with a model, an extension and --cwd recorded", async () => {
  // The worker role's default context is recent:2, so the child's prompt holds the flow session's
  // first message: the shell's command line. How the children were answered (--model, --extension,
  // --record, --replay) and where the shell stood (--cwd) must not change that prompt.
  sandbox.fauxRules([{ match: "Fix the trailing dash", answer: "Changed slugify to trim both ends." }]);
  const script = sandbox.file(
    "fix.js",
    'export const apiVersion = 1;\nexport const meta = { description: "One worker" };\n' +
      'const fix = await agent({ role: "worker", description: "Fix", prompt: "Fix the trailing dash in " + args.file });\nreturn fix.output;\n',
  );
  const cassette = join(sandbox.root, "worker.jsonl");
  const args = ["--args", JSON.stringify({ file: "src/slugify.js" })];
  const recorded = await flowInProcess(["run", script, "--cwd", QUICKSTART, ...args, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION, "--record", cassette], { env: sandbox.env });
  expect(recorded.code, recorded.stderr).toBe(0);
  expect(JSON.parse(recorded.stdout)).toBe("Changed slugify to trim both ends.");

  const replayed = await flowInProcess(["run", script, ...args, "--replay", cassette, "--json"], { cwd: QUICKSTART, env: sandbox.env });
  expect(replayed.stderr).not.toMatch(/has no answer/);
  expect(replayed.code).toBe(0);
  expect(JSON.parse(replayed.stdout)).toMatchObject({ ok: true, data: { run: { output: { value: "Changed slugify to trim both ends." } } } });
});

test("--record replaces its file only with a run that launched: a run refused before launch leaves the cassette as it was", async () => {
  const cassette = join(sandbox.root, "kept.jsonl");
  const before = readFileSync(join(QUICKSTART, "..", "cassettes", "review.jsonl"), "utf8");
  writeFileSync(cassette, before);
  const refused = await flowInProcess(
    ["run", "review", "--cwd", QUICKSTART, "--args", '{"nope":1}', "--model", "faux/faux-1", "--extension", FAUX_EXTENSION, "--record", cassette],
    { env: sandbox.env },
  );
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/request_invalid/);
  expect(readFileSync(cassette, "utf8")).toBe(before);
  expect(readdirSync(sandbox.root).filter((name) => name.endsWith(".recording"))).toEqual([]);
});
