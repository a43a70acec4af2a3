import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText } from "@earendil-works/pi-ai";
import { afterEach, expect, test } from "vitest";
import { createPiHarness } from "../../src/harnesses/pi.ts";
import type { ChildRequest } from "../../src/harnesses/types.ts";

/**
 * An outputSchema's pattern is written by a model that reads untrusted content: a real child
 * AgentSession on Pi's faux provider answers a string that makes a catastrophically backtracking
 * pattern run for ever, and the host's event loop keeps turning while the answer is checked.
 */

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A pi child answering `answer`, under `outputSchema`; `onAnswered` runs as the model answers. */
async function runChild(answer: string, outputSchema: Record<string, unknown>, onAnswered: () => void = () => {}) {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-pattern-")));
  made.push(scratch);
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  faux.setResponses([
    () => {
      onAnswered();
      return fauxAssistantMessage([fauxText(answer)]);
    },
  ]);
  const runtime = await ModelRuntime.create({ authPath: join(scratch, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");
  const harness = createPiHarness({ agentDir: join(scratch, "agent"), model: faux.getModel(), modelRuntime: runtime });
  const request: ChildRequest = {
    profile: { name: "worker", description: "w", systemPrompt: "You work.", tools: [], defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:worker", description: "slug" },
    prompt: "Answer.",
    cwd: scratch,
    loading: { projectTrusted: true, isolated: true },
    signal: new AbortController().signal,
    outputSchema,
    onProgress: () => {},
    onOutput: () => {},
    onDiagnostic: () => {},
  };
  return harness.run(request);
}

const withPattern = (pattern: string) => ({ type: "object", properties: { slug: { type: "string", pattern } }, required: ["slug"] });

test("a child answering a string a backtracking pattern never finishes on fails the run, naming the pattern, and the host keeps running meanwhile", async () => {
  let beats = 0;
  const heartbeat = setInterval(() => beats++, 5);
  let beatsWhenAnswered = 0;
  try {
    const result = await runChild(JSON.stringify({ slug: `${"a".repeat(40)}!` }), withPattern("^(a+)+$"), () => (beatsWhenAnswered = beats));
    // The heartbeat fired after the child answered: the host was not frozen by the check.
    expect(beats).toBeGreaterThan(beatsWhenAnswered);
    expect(result.outcome).toBe("failed");
    expect(result.error?.message).toMatch(/^Checking the child's answer against outputSchema took longer than \d+ s at the pattern "\^\(a\+\)\+\$", so the check was stopped/);
  } finally {
    clearInterval(heartbeat);
  }
});

test("patternProperties are checked off the main thread too", async () => {
  const schema = { type: "object", patternProperties: { "^(\\w+\\s?)*$": { type: "number" } } };
  const result = await runChild(JSON.stringify({ [`${"word ".repeat(12)}word!`]: "x" }), schema);
  expect(result.error?.message).toMatch(/took longer than \d+ s at the pattern "\^\(\\\\w\+\\\\s\?\)\*\$"/);
});

test("a common slug pattern with a nested quantifier keeps accepting good slugs and refusing bad ones", async () => {
  const slug = withPattern("^[a-z0-9]+(-[a-z0-9]+)*$");
  expect(await runChild(JSON.stringify({ slug: "pi-flow-2" }), slug)).toMatchObject({ outcome: "succeeded", value: { slug: "pi-flow-2" } });
  const bad = await runChild(JSON.stringify({ slug: `${"a-".repeat(30)}-` }), slug);
  expect(bad.outcome).toBe("failed");
  expect(bad.error?.message).toMatch(/^The child's answer does not satisfy outputSchema at \/slug: /);
});

test("checks queued behind a stuck pattern still get their answers, from the worker that replaces the stopped one", async () => {
  const { checkInWorker } = await import("../../src/harnesses/schema-worker.ts");
  const stuck = { type: "string", pattern: "^(a+)+$" };
  const slug = { type: "string", pattern: "^[a-z0-9]+(-[a-z0-9]+)*$" };
  const [first, second, third, fourth] = await Promise.all([
    checkInWorker("pi-flow", slug),
    checkInWorker(`${"a".repeat(40)}!`, stuck, { limitMs: 500 }),
    checkInWorker("pi-flow-2", slug),
    checkInWorker("Not A Slug", slug),
  ]);
  expect(first).toEqual({ kind: "checked", violation: undefined });
  expect(second).toEqual({ kind: "too_slow", pattern: "^(a+)+$" });
  expect(third).toEqual({ kind: "checked", violation: undefined });
  expect(fourth.kind).toBe("checked");
  expect(fourth.kind === "checked" && fourth.violation?.pointer).toBe("");
});

test("a check stopped in uniqueItems after a pattern ran blames uniqueItems and where it is, not the pattern that finished", async () => {
  const { checkInWorker } = await import("../../src/harnesses/schema-worker.ts");
  const { stoppedCheck } = await import("../../src/harnesses/schema-stops.ts");
  // Every tag passes its pattern at once; comparing every pair of 100,000 tags is what takes the time.
  const schema = { type: "object", properties: { tags: { type: "array", uniqueItems: true, items: { type: "string", pattern: "^tag-\\d+$" } } } };
  const tags = Array.from({ length: 100_000 }, (_, index) => `tag-${index}`);
  const stopped = await checkInWorker({ tags }, schema, { limitMs: 500 });
  expect(stopped).toEqual({ kind: "too_slow", pattern: undefined });
  if (stopped.kind !== "too_slow") return;
  expect(stoppedCheck("the child's answer against outputSchema", stopped, schema)).toMatch(
    /^Checking the child's answer against outputSchema took longer than \d+ s at uniqueItems \(at \/properties\/tags\), so the check was stopped: uniqueItems compares every pair of an array's items/,
  );
});

test("an answer checked against two long patterns in turn is not slowed by naming them: each pattern's text goes to the host once per check, not once per string", async () => {
  const { checkInWorker, SchemaWorker } = await import("../../src/harnesses/schema-worker.ts");
  // Two patterns of 130,000 characters each, tested in turn on each of 40,000 strings: posted at
  // every change, that was 80,000 copies of 130 KB to the host, past the check's 3 s. Counted, not
  // timed: the check gets all the time a busy machine needs.
  const long = `^(?:${Array.from({ length: 20_000 }, (_, index) => `a${index}`).join("|")}|a)$`;
  const schema = { type: "array", items: { type: "string", allOf: [{ pattern: long }, { pattern: `(?:)${long}` }] } };
  const checker = new SchemaWorker();
  expect(await checkInWorker(Array.from({ length: 40_000 }, () => "a"), schema, { limitMs: 600_000, checker })).toEqual({ kind: "checked", violation: undefined });
  expect(checker.stats.patternsPosted).toBe(2);
});

test("a schema's long pattern, key or $ref is quoted cut short in the messages that name it, not whole", async () => {
  const { checkStructuredValue } = await import("../../src/harnesses/structured-answer.ts");
  const { outputSchemaProblem } = await import("../../src/harnesses/output-schema-problem.ts");
  const long = `^a${"(?:b)?".repeat(5_000)}$`;
  // What is asserted is the messages, not the checks' speed: a busy machine gets all the time it needs.
  const noTimeLimit = 600_000;
  const refused = await checkStructuredValue({ ["k".repeat(100_000)]: "c" }, { type: "object", additionalProperties: { type: "string", pattern: long } }, undefined, noTimeLimit);
  expect(refused).toMatchObject({ ok: false, message: expect.stringMatching(/^The child's answer does not satisfy outputSchema at \/kkkk.*… \[\d+ more characters cut\]: expected to match \^a\(\?:b\)\?.*… \[\d+ more characters cut\]\.$/) });
  expect(!refused.ok && refused.message.length).toBeLessThan(1_000);
  for (const schema of [{ type: "string", pattern: `(${"a".repeat(1_000_000)}` }, { properties: { ["k".repeat(1_000_000)]: { type: "objekt" } } }, { $ref: `#/$defs/${"z".repeat(1_000_000)}` }]) {
    const problem = await outputSchemaProblem(schema, { limitMs: noTimeLimit });
    expect(problem).toMatch(/^outputSchema is not a usable JSON Schema: .*… \[\d+ more characters cut\]/);
    expect(problem!.length).toBeLessThan(1_000);
  }
  // A pattern too large for the regexp engine is refused by the worker, quoting it cut short too.
  const tooLarge = await checkStructuredValue("c", { type: "string", pattern: `^a${"(?:b)?".repeat(50_000)}$` }, undefined, noTimeLimit);
  expect(tooLarge).toMatchObject({ ok: false, message: expect.stringMatching(/^The child's answer could not be checked against outputSchema: .*… \[\d+ more characters cut\]\.$/) });
  expect(!tooLarge.ok && tooLarge.message.length).toBeLessThan(1_000);
});

test("a job that outgrows the worker's memory limit ends that worker, not the host: it answers out_of_memory, and the next job gets a new worker", async () => {
  const { checkInWorker, generateInWorker, SchemaWorker } = await import("../../src/harnesses/schema-worker.ts");
  // A checker with a small limit, so the jobs outgrow it in a second; the process's own has SCHEMA_WORK_MEMORY_MB.
  const small = new SchemaWorker(16);
  const noTimeLimit = 600_000;
  const huge = await generateInWorker({ type: "string", minLength: 100_000_000 }, { seed: 1 }, 1_000_000, { limitMs: noTimeLimit, checker: small });
  expect(huge).toEqual({ kind: "out_of_memory", pattern: undefined });
  const items = Array.from({ length: 300_000 }, (_, index) => ({ id: `item-${index}` }));
  const schema = { type: "array", items: { type: "object", properties: { id: { type: "string", pattern: "^item-\\d+$" } } } };
  expect(await checkInWorker(items, schema, { limitMs: noTimeLimit, checker: small })).toEqual({ kind: "out_of_memory", pattern: undefined });
  expect(await checkInWorker(items.slice(0, 10), schema, { limitMs: noTimeLimit, checker: small })).toEqual({ kind: "checked", violation: undefined });
});

test("a cancel stops a check running in the worker at once, and the next check gets its answer from a new worker", async () => {
  const { checkInWorker } = await import("../../src/harnesses/schema-worker.ts");
  const slug = { type: "string", pattern: "^[a-z0-9]+(-[a-z0-9]+)*$" };
  const controller = new AbortController();
  const ahead = checkInWorker("pi-flow", slug);
  // No time limit to speak of: only the cancel can end this check.
  const stuck = checkInWorker(`${"a".repeat(40)}!`, { type: "string", pattern: "^(a+)+$" }, { limitMs: 600_000, signal: controller.signal });
  expect(await ahead).toEqual({ kind: "checked", violation: undefined });
  // The check ahead has answered, so the stuck one is running in the worker now.
  controller.abort();
  expect(await stuck).toEqual({ kind: "cancelled" });
  expect(await checkInWorker("pi-flow-2", slug)).toEqual({ kind: "checked", violation: undefined });
});

test("a child's answer whose check is cancelled says so, and a value check cancelled before it starts never runs", async () => {
  const { checkStructuredValue } = await import("../../src/harnesses/structured-answer.ts");
  const controller = new AbortController();
  const stuck = checkStructuredValue(`${"a".repeat(40)}!`, { type: "string", pattern: "^(a+)+$" }, controller.signal);
  controller.abort();
  expect(await stuck).toEqual({ ok: false, cancelled: true, message: "Checking the child's answer against outputSchema was cancelled." });
  expect(await checkStructuredValue("x", { type: "string", pattern: "^x$" }, controller.signal)).toMatchObject({ ok: false, cancelled: true });
});

test("a schema with no pattern whose check grows faster than the answer (uniqueItems over a long array, $refs that branch into each other) is checked off the main thread too, and stopped", async () => {
  const { checkStructuredValue } = await import("../../src/harnesses/structured-answer.ts");
  const branching: Record<string, unknown> = { b40: { type: "string" } };
  for (let level = 0; level < 40; level++) branching[`b${level}`] = { anyOf: [{ $ref: `#/$defs/b${level + 1}` }, { $ref: `#/$defs/b${level + 1}` }] };
  const schemas = [
    {
      value: Array.from({ length: 1_000_000 }, (_, index) => index),
      schema: { type: "array", uniqueItems: true },
      named: /took longer than \d+ s at uniqueItems \(at \/\), so the check was stopped: uniqueItems compares every pair of an array's items/,
    },
    {
      value: 1,
      schema: { $defs: branching, $ref: "#/$defs/b0" },
      named: /took longer than \d+ s in the \$refs \(at \/, \/\$defs\/b0\/anyOf\/0, \/\$defs\/b0\/anyOf\/1 and \d+ more\), so the check was stopped: \$refs that branch into each other/,
    },
  ];
  for (const { value, schema, named } of schemas) {
    let settled = false;
    const pending = checkStructuredValue(value, schema).finally(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(await pending).toEqual({
      ok: false,
      stopped: true,
      message: expect.stringMatching(named),
    });
  }
});

test("a job too deeply nested to be sent to the worker answers an error, and the checks after it still get their answers", async () => {
  const { checkInWorker, SchemaWorker } = await import("../../src/harnesses/schema-worker.ts");
  // Its own checker: were it wedged, the process's one would hang every later check in this file.
  const checker = new SchemaWorker();
  // Copying a schema 5,000 levels deep to the worker overflows the host's stack: the job was left
  // running for ever, and every check queued behind it on the process's one checker never answered.
  const deep = JSON.parse(`${'{"not":'.repeat(5_000)}{}${"}".repeat(5_000)}`) as Record<string, unknown>;
  const [refused, next] = await Promise.all([checkInWorker("x", deep, { checker }), checkInWorker("x", { type: "string" }, { checker })]);
  expect(refused).toEqual({ kind: "error", message: expect.stringMatching(/^the schema or value could not be sent to the checking worker: Maximum call stack size exceeded/), unsent: "too_deep" });
  expect(next).toEqual({ kind: "checked", violation: undefined });
});

test("as delegation.md says: format is not checked, a pattern has the u flag when it is valid with it, and falls back without it otherwise", async () => {
  const { checkStructuredValue } = await import("../../src/harnesses/structured-answer.ts");
  expect(await checkStructuredValue("not an email", { type: "string", format: "email" })).toMatchObject({ ok: true });
  expect(await checkStructuredValue("héllo", { type: "string", pattern: "^\\p{L}+$" })).toMatchObject({ ok: true });
  expect(await checkStructuredValue("a-b_c", { type: "string", pattern: "^a\\-b\\_c$" })).toMatchObject({ ok: true });
  expect(await checkStructuredValue("p{Nope}", { type: "string", pattern: "^\\p{Nope}$" })).toMatchObject({ ok: true });
});

test("an answer's 1e400 fails as a number JavaScript reads as Infinity; 2^53 itself, a long decimal and an exponent JavaScript holds pass as written", async () => {
  const { parseStructuredAnswer } = await import("../../src/harnesses/structured-answer.ts");
  const schema = { type: "object", properties: { id: { type: "integer" }, ratio: { type: "number" } } };
  expect(await parseStructuredAnswer('{"id": 7, "ratio": 1e400}', schema)).toMatchObject({ ok: false, message: expect.stringContaining("1e400, which a JSON number here cannot hold exactly (it reads as Infinity)") });
  expect(await parseStructuredAnswer('{"id": 9007199254740992, "ratio": 0.12345678901234567}', schema)).toEqual({ ok: true, value: { id: 9007199254740992, ratio: 0.12345678901234567 } });
  expect(await parseStructuredAnswer('{"id": 1e20, "ratio": 2.5e-300}', schema)).toEqual({ ok: true, value: { id: 1e20, ratio: 2.5e-300 } });
});
