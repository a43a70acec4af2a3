import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { generateDeclarations } from "../../runtime/index.ts";
import { checkInMemory } from "../support/typecheck.ts";

const FLOW_DTS = new URL("../../workflows/flow.d.ts", import.meta.url);

/** Type-checks a workflow script (as a plain script, like an editor with flow.d.ts would) against declarations. */
export function typeErrors(declarations: string, script: string): string[] {
  const files = new Map([
    ["/flow.d.ts", declarations],
    ["/workflow.ts", `export {};\nasync function body() {\n${script}\n}\n`],
  ]);
  return checkInMemory(files, { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, lib: ["lib.es2022.d.ts"], types: [] });
}

describe("generateDeclarations", () => {
  it("without options declares open tools and args, meta's type and no saved workflows", async () => {
    const declarations = await generateDeclarations();
    expect(declarations).toContain("readonly [name: string]: (args?: Record<string, unknown>) => Promise<unknown>;");
    expect(declarations).toContain("interface FlowWorkflowArgs {\n}");
    expect(typeErrors(declarations, `const meta = /** @type {WorkflowMeta} */ ({}); const m: WorkflowMeta = { name: "x", limits: { agentCalls: 2 } }; await tools.anything({});`)).toEqual([]);
    expect(typeErrors(declarations, `const m: WorkflowMeta = { limit: { agentCalls: 2 } };`).join("\n")).toMatch(/limit/);
    expect(typeErrors(declarations, `const m: WorkflowMeta = { limits: { agentCall: 2 } };`).join("\n")).toMatch(/agentCall/);
  });

  it("declares every global and helper, and type-checks a typical workflow", async () => {
    const declarations = readFileSync(FLOW_DTS, "utf8");
    const errors = typeErrors(
      declarations,
      `const lenses = ["correctness", "tests"];
       const reviews = await parallel(lenses.map((lens) => () =>
         agent({ role: "reviewer", description: "Review " + lens, context: { mode: "none" }, prompt: "Review " + String(args.target) })), { concurrency: 2 });
       const final = await retry(() => agent({ subagent_type: "general", cwd: "pkg", prompt: "p" }), { attempts: 2, retryIf: (e) => e.code !== "cancelled" });
       const observed: string | undefined = final.observedAt;
       const packet: string = handoff(reviews.map((r) => r.value), { maxChars: 100, source: { runId: final.runId, observedAt: observed } });
       const fromResult: string = handoff(final.value, { source: final });
       store("packet", packet);
       const again = load<string>("packet");
       const page = await tools.external_runs({ action: "list" });
       const full = await readFinal<{ verdict: string }>({ runId: "r", output: { delivery: "inline", finalAvailable: true, value: 1 }, refs: {} });
       console.log(again, page, full.verdict);
       text(Date.now() + Math.random());`,
    );
    expect(errors).toEqual([]);
  });

  it("rejects what a script cannot do", async () => {
    const declarations = readFileSync(FLOW_DTS, "utf8");
    expect(typeErrors(declarations, `await agent({ role: "r", description: "d" });`).join("\n")).toMatch(/prompt/);
    // Exactly one of role or subagent_type, as the host requires.
    expect(typeErrors(declarations, `await agent({ prompt: "p" });`)).not.toEqual([]);
    expect(typeErrors(declarations, `await agent({ role: "r", subagent_type: "s", prompt: "p" });`)).not.toEqual([]);
    expect(typeErrors(declarations, `setTimeout(() => {}, 1);`).join("\n")).toMatch(/setTimeout/);
    expect(typeErrors(declarations, `await agent({ role: "r", description: "d", prompt: "p", context: { mode: "shared" } });`).join("\n")).toMatch(/shared/);
    expect(typeErrors(declarations, `await agent({ role: "r", prompt: "p", cwd: 1 });`)).not.toEqual([]);
  });

  it("types tools.* from each tool's input and output schemas", async () => {
    const declarations = await generateDeclarations({
      toolSchemas: {
        external_runs: {
          description: "Supervise runs.",
          input: { type: "object", properties: { action: { enum: ["list", "inspect"] }, runIds: { type: "array", items: { type: "string" } } }, required: ["action"], additionalProperties: false },
          output: { type: "object", properties: { ok: { type: "boolean" }, data: {} }, required: ["ok"] },
        },
        "echo-text": { input: { type: "object", properties: { text: { type: "string" } } } },
      },
      argsSchema: { type: "object", properties: { target: { type: "string" } }, required: ["target"], additionalProperties: false },
    });
    expect(declarations).toContain("interface ExternalRunsInput {");
    expect(declarations).toContain("external_runs(args: ExternalRunsInput): Promise<ExternalRunsOutput>;");
    expect(declarations).toContain('"echo-text"(args: EchoTextInput): Promise<string>;');
    expect(declarations).toContain("interface WorkflowArgs {\n  target: string;\n}");
    expect(typeErrors(declarations, `const r = await tools.external_runs({ action: "list" }); const ok: boolean = r.ok; const t: string = args.target;`)).toEqual([]);
    expect(typeErrors(declarations, `await tools.external_runs({ action: "wait" });`).join("\n")).toMatch(/"wait"/);
    expect(typeErrors(declarations, `await tools.external_delegate({});`).join("\n")).toMatch(/external_delegate/);
  });

  it("types each saved workflow's args for the function form, from its meta.args", async () => {
    const declarations = await generateDeclarations({
      workflows: {
        "triage.v2": { type: "object", properties: { issue: { type: "integer" }, labels: { type: "array", items: { type: "string" } } }, required: ["issue"], additionalProperties: false },
        open: undefined,
      },
    });
    expect(declarations).toContain('"triage.v2": TriageV2WorkflowArgs;');
    const body = (name: string, line: string) => `/** @param {WorkflowInput<${JSON.stringify(name)}>} input */\nconst main = async ({ args }: WorkflowInput<${JSON.stringify(name)}>) => { ${line} };`;
    expect(typeErrors(declarations, body("triage.v2", "const n: number = args.issue; const l: string[] | undefined = args.labels?.slice(); return n + (l?.length ?? 0);"))).toEqual([]);
    expect(typeErrors(declarations, body("triage.v2", "return args.title;")).join("\n")).toMatch(/title/);
    expect(typeErrors(declarations, body("open", "return args.anything;"))).toEqual([]);
    expect(typeErrors(declarations, body("missing", "return 1;")).join("\n")).toMatch(/missing/);
  });
});
