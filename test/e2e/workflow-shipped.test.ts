import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { fauxAssistantMessage, fauxText, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import { HANDOFF_HEADER } from "../../helpers/index.ts";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import type { RunView } from "../../src/contract/run-schema.ts";
import { seenBy, type Seen } from "../support/children.ts";
import { PROJECT_ROOT, startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { schemaViolation } from "../support/schema.ts";
import { gitIn, worktreeCount, writeIn } from "../support/git-repo.ts";

import type { Receipt } from "../support/receipts.ts";

const FAIL = Symbol("fail");

/**
 * Children of a parallel fan-out ask in any order, so each answer is chosen by what the child was
 * asked: the first rule whose needle its user messages contain. Records what each child saw. With
 * a gauge, requests are answered in groups of `barrier` (all present before any answers), and the
 * gauge keeps the most requests that were ever in flight at once.
 */
type Gauge = { barrier: number; now: number; max: number; waiting: (() => void)[] };
function router(rules: [string, string | typeof FAIL][], seen: Seen[], count: number, gauge?: Gauge): FauxResponseStep[] {
  const step: FauxResponseStep = async (context) => {
    const view = seenBy(context.messages);
    seen.push(view);
    if (gauge) {
      gauge.now++;
      gauge.max = Math.max(gauge.max, gauge.now);
      await new Promise<void>((resolve) => {
        gauge.waiting.push(resolve);
        if (gauge.waiting.length >= gauge.barrier) for (const release of gauge.waiting.splice(0)) release();
      });
      gauge.now--;
    }
    const answer = rules.find(([needle]) => view.user.includes(needle))?.[1] ?? "(no rule matched)";
    return answer === FAIL ? fauxAssistantMessage([], { stopReason: "error", errorMessage: "provider exploded" }) : fauxAssistantMessage([fauxText(answer)]);
  };
  return Array.from({ length: count }, () => step);
}

let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
  await pi.say("The deployment password is hunter2-PARENT-ONLY.", "Understood.");
});
afterEach(() => pi.dispose());

async function shipped(workflow: string, args: Record<string, unknown>, children: FauxResponseStep[]) {
  const result = await pi.callTool("external_workflow", { workflow, args }, { children });
  const receipt = result.structuredContent as Receipt;
  expect(schemaViolation(TOOL_SCHEMAS.external_workflow.output, receipt)).toBeNull();
  expect(receipt.data.run).toMatchObject({ task: { workflow, source: "shipped" } });
  return { receipt, run: receipt.data.run!, result, value: receipt.data.run!.output.value as Record<string, unknown> };
}

const find = (seen: Seen[], needle: string) => seen.find((view) => view.user.includes(needle))!;

describe("review", () => {
  const rules = (tests: string | typeof FAIL): [string, string | typeof FAIL][] => [
    ["Combine their verdicts", "OVERALL: request changes"],
    ["for correctness only", "VERDICT-CORRECTNESS: approve"],
    ["for tests only", tests],
  ];

  test("reviewers judge independently in parallel, then a synthesis sees every verdict", async () => {
    const seen: Seen[] = [];
    const { receipt, run, value } = await shipped("review", { target: "src/tokenizer.ts", lenses: ["correctness", "tests"] }, router(rules("VERDICT-TESTS: request changes"), seen, 3));
    expect(receipt).toMatchObject({ ok: true, warnings: [] });
    expect(run.children).toEqual({ count: 3, failed: 0 });
    expect(value).toMatchObject({
      target: "src/tokenizer.ts",
      reviews: [
        { lens: "correctness", verdict: "VERDICT-CORRECTNESS: approve" },
        { lens: "tests", verdict: "VERDICT-TESTS: request changes" },
      ],
      synthesis: { verdict: "OVERALL: request changes" },
    });
    const correctness = find(seen, "for correctness only");
    const tests = find(seen, "for tests only");
    expect(correctness.all).not.toContain("VERDICT-TESTS");
    expect(tests.all).not.toContain("VERDICT-CORRECTNESS");
    for (const view of seen) expect(view.all).not.toContain("hunter2-PARENT-ONLY");
    const synthesis = find(seen, "Combine their verdicts");
    expect(synthesis.user).toContain(HANDOFF_HEADER);
    expect(synthesis.user).toContain("VERDICT-CORRECTNESS: approve");
    expect(synthesis.user).toContain("VERDICT-TESTS: request changes");
  });

  test("a failed reviewer is reported, the synthesis is told, and the root carries handled_child_failures", async () => {
    const seen: Seen[] = [];
    const { receipt, run, value, result } = await shipped("review", { target: "x", lenses: ["correctness", "tests"] }, router(rules(FAIL), seen, 3));
    expect(receipt).toMatchObject({ ok: true, warnings: ["handled_child_failures"] });
    expect(run.children).toEqual({ count: 3, failed: 1 });
    expect(value.reviews).toMatchObject([{ lens: "correctness" }, { lens: "tests", error: "failed" }]);
    expect(find(seen, "Combine their verdicts").user).toContain("No verdict is available for: tests");
    expect(result.text).toContain("handled_child_failures");
  });
});

describe("map", () => {
  test("one prompt over items, at most `concurrency` at once, structured results in item order", async () => {
    const seen: Seen[] = [];
    const gauge: Gauge = { barrier: 2, now: 0, max: 0, waiting: [] };
    const items = ["a.ts", "b.ts", "c.ts", "d.ts"];
    const rules: [string, string | typeof FAIL][] = [
      ["exports of a.ts", '{"exports": 1}'],
      ["exports of b.ts", '```json\n{"exports": 2}\n```'],
      ["exports of c.ts", FAIL],
      ["exports of d.ts", '{"exports": 4}'],
    ];
    const outputSchema = { type: "object", properties: { exports: { type: "integer" } }, required: ["exports"] };
    const { receipt, run, value } = await shipped(
      "map",
      { items, prompt: "Count the exports of {{item}}.", concurrency: 2, outputSchema },
      router(rules, seen, 4, gauge),
    );
    expect(receipt).toMatchObject({ ok: true, warnings: ["handled_child_failures"] });
    expect(run.children).toEqual({ count: 4, failed: 1 });
    expect(value).toMatchObject({
      failed: 1,
      results: [
        { item: "a.ts", ok: true, value: { exports: 1 } },
        { item: "b.ts", ok: true, value: { exports: 2 } },
        { item: "c.ts", ok: false, code: "failed" },
        { item: "d.ts", ok: true, value: { exports: 4 } },
      ],
    });
    expect(gauge.max).toBe(2);
    expect(seen.every((view) => !view.all.includes("hunter2-PARENT-ONLY"))).toBe(true);
  });
});

describe("handoff", () => {
  test("collects evidence, then a reviewer judges only a bounded packet stamped with its source", async () => {
    const seen: Seen[] = [];
    const evidence = `EVIDENCE-START ${"e".repeat(20 * 1024)} EVIDENCE-END`;
    const { receipt, run, value } = await shipped(
      "handoff",
      { collectPrompt: "Collect the call sites.", reviewPrompt: "Judge the call sites.", maxChars: 1000 },
      router([["Collect the call sites.", evidence], ["Judge the call sites.", "VERDICT: two call sites lack handling"]], seen, 2),
    );
    expect(receipt.ok).toBe(true);
    expect(run.children).toEqual({ count: 2, failed: 0 });
    // The workflow's usage is its children's: one turn each here.
    expect(run.usage).toMatchObject({ turns: 2, toolCalls: 0 });
    const collect = value.collect as { runId: string; chars: number };
    expect(collect.chars).toBe(evidence.length);
    expect(value).toMatchObject({ review: { verdict: "VERDICT: two call sites lack handling" }, omittedChars: evidence.length - 1000 });
    const reviewer = find(seen, "Judge the call sites.");
    expect(reviewer.user).toContain(HANDOFF_HEADER);
    expect(reviewer.user).toContain(`"sourceRunId":"${collect.runId}"`);
    expect(reviewer.user).toContain(`bounded to 1000 chars (${evidence.length - 1000} chars omitted)`);
    expect(reviewer.user).toContain("EVIDENCE-START");
    expect(reviewer.all).not.toContain("EVIDENCE-END");
    expect(reviewer.all).not.toContain("hunter2-PARENT-ONLY");
    // The packet is stamped with when the evidence was captured: the collecting child's end.
    const inspected = await pi.callTool("external_runs", { action: "inspect", runIds: [collect.runId] });
    const endedAt = (inspected.structuredContent as { data: { entries: RunView[] } }).data.entries[0]!.timing.endedAt!;
    expect(reviewer.user).toContain(`"capturedAt":"${endedAt}"`);
  });
});

/** A writer of parallel-edit: writes its task, as the file's whole content, into its path; then says so. */
const writer: FauxResponseStep = (context) => {
  const [, path, task] = /Edit (\S+), and no other file: ([^\n]*)/.exec(seenBy(context.messages).user) ?? [];
  if (!context.messages.some((message) => message.role === "toolResult")) {
    return fauxAssistantMessage([fauxToolCall("write", { path: path!, content: `${task}\n` })], { stopReason: "toolUse" });
  }
  return fauxAssistantMessage([fauxText(`Wrote ${path}.`)]);
};

/** The session's directory as a git working tree with `files` committed (its Pi and Flow directories ignored). */
function gitProject(files: Record<string, string>): string {
  gitIn(pi.cwd, "init", "-q", "-b", "main");
  writeIn(pi.cwd, { ".gitignore": ".agent/\n.flow-home/\n", ...files });
  gitIn(pi.cwd, "add", "-A");
  gitIn(pi.cwd, "commit", "-q", "-m", "initial");
  return pi.cwd;
}

describe("the examples in docs/workflows.md run as written", () => {
  const docs = readFileSync(join(PROJECT_ROOT, "docs", "workflows.md"), "utf8");
  const examples = new Map([...docs.matchAll(/```js\n\/\/ example:(\S+)\n([\s\S]*?)```/g)].map((match) => [match[1]!, match[2]!]));

  test("every shipped workflow has a docs example", () => {
    expect([...examples.keys()].sort()).toEqual(["handoff", "inline", "map", "parallel-edit", "review"]);
  });

  test.each([
    ["inline", [["List the parser modules", "lexer\nparser"]], 1, { parsers: ["lexer", "parser"] }],
    [
      "review",
      [["Combine their verdicts", "OVERALL: approve"], ["for correctness only", "approve"], ["for tests only", "approve"]],
      3,
      { verdict: "OVERALL: approve", lenses: ["correctness", "tests"] },
    ],
    ["map", [["src/lexer.ts", '{"exports": 3}'], ["src/parser.ts", '{"exports": 5}']], 2, [["src/lexer.ts", 3], ["src/parser.ts", 5]]],
    ["handoff", [["Collect every call site", "config.ts:10, cli.ts:22"], ["Do all call sites", "VERDICT: cli.ts:22 does not"]], 2, { verdict: "VERDICT: cli.ts:22 does not", omittedChars: 0 }],
  ] as const)("%s", async (name, rules, count, expected) => {
    const outcome = await pi.runCodemode(examples.get(name)!, { children: router(rules.map(([a, b]) => [a, b]), [], count) });
    expect(outcome.isError).toBe(false);
    expect(outcome.value).toEqual(expected);
  });

  test("parallel-edit, in a git working tree: writers in their own worktrees, the first of one file lands, the second conflicts and keeps its changes", async () => {
    const root = gitProject({ "src/lexer.ts": "export {};\n", "src/parser.ts": "export {};\n" });
    const outcome = await pi.runCodemode(examples.get("parallel-edit")!, { children: Array.from({ length: 6 }, () => writer) });
    expect(outcome.isError).toBe(false);
    const { applied, conflicts } = outcome.value as { applied: string[]; conflicts: string[] };
    expect(applied).toEqual(["src/lexer.ts", "src/parser.ts"]);
    expect(conflicts).toHaveLength(1);
    expect(readFileSync(join(root, "src/lexer.ts"), "utf8")).toBe("Name the token kinds in one exported union type.\n");
    expect(readFileSync(join(root, "src/parser.ts"), "utf8")).toBe("Report the line of a syntax error.\n");
    expect(gitIn(root, "show", `refs/pi-flow/${conflicts[0]}:src/lexer.ts`)).toBe("Skip comments.");
    expect(gitIn(root, "diff", "--cached", "--name-only")).toBe("");
    expect(worktreeCount(root)).toBe(1);
  });
});
