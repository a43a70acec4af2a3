import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compile, type JsonSchema } from "@earendil-works/pi-schema";
import { describe, expect, it } from "vitest";
import { DelegateInputSchema } from "../../src/contract/delegate-schema.ts";
import { RunViewSchema } from "../../src/contract/run-schema.ts";
import { agentOptionsSchema, contractSchemasModule, readFinalRunSchema } from "../../src/contract/script-schemas.ts";
import { checkAgentOptions } from "../../src/orchestrator/workflow/agent-options.ts";
import { AGENT_OPTIONS_SCHEMA, RUN_VIEW_SCHEMA, SCRIPT_SCHEMAS, WORKFLOW_HELPERS } from "../../helpers/index.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

type Schema = { [key: string]: unknown };
const plain = (schema: unknown): Schema => JSON.parse(JSON.stringify(schema)) as Schema;
const [roleBranch, subagentBranch] = plain(DelegateInputSchema).anyOf as [Schema, Schema];

describe("the scripts' schemas come from the contract", () => {
  it("helpers/contract-schemas.ts is what npm run build:types derives from the contract", () => {
    expect(readFileSync(join(PROJECT_ROOT, "helpers/contract-schemas.ts"), "utf8")).toBe(contractSchemasModule());
    expect(AGENT_OPTIONS_SCHEMA).toEqual(agentOptionsSchema());
    expect(RUN_VIEW_SCHEMA).toEqual(readFinalRunSchema());
    // One object everywhere: external_help serves it and the declarations are generated from it.
    expect(WORKFLOW_HELPERS.agentOptions).toBe(AGENT_OPTIONS_SCHEMA);
    expect(SCRIPT_SCHEMAS.find(([name]) => name === "AgentOptions")?.[1]).toBe(AGENT_OPTIONS_SCHEMA);
    expect(SCRIPT_SCHEMAS.find(([name]) => name === "RunView")?.[1]).toBe(RUN_VIEW_SCHEMA);
  });

  it("agent() takes every external_delegate field but background, with the same schema, closed the same way", () => {
    const options = agentOptionsSchema();
    const properties = options.properties as Schema;
    const delegateFields = { ...(roleBranch.properties as Schema), ...(subagentBranch.properties as Schema) };
    delete delegateFields.background;
    expect(properties).toEqual(delegateFields);
    expect((properties.timeoutMs as Schema).minimum).toBe(1000);
    expect(options.additionalProperties).toBe(roleBranch.additionalProperties);
    expect(options.additionalProperties).toBe(false);
    expect(options.required).toEqual(["prompt"]);
  });

  it("agent() refuses exactly what external_delegate refuses (apart from background and a missing description)", () => {
    const delegate = compile(DelegateInputSchema as unknown as JsonSchema);
    const candidates: Schema[] = [
      { role: "explorer", prompt: "p" },
      { role: "explorer", prompt: "p", timeoutMs: 999 },
      { role: "explorer", prompt: "p", timeoutMs: 1000 },
      { role: "explorer", prompt: "p", maxTurns: 0 },
      { role: "explorer", prompt: "p", maxToolCalls: 2.5 },
      { role: "explorer", prompt: "" },
      { role: "explorer", prompt: "p", unknownField: true },
      { role: "explorer", prompt: "p", context: { mode: "recent", turns: 0 } },
      { role: "explorer", prompt: "p", context: { mode: "full" }, harness: "codex", model: "a/b", cwd: ".", resume: "ag_1", outputSchema: {} },
      { subagent_type: "general", prompt: "p" },
      { subagent_type: "general", prompt: "p", harness: "pi" },
      { role: "explorer", subagent_type: "general", prompt: "p" },
      { prompt: "p" },
      { role: "explorer", prompt: "p", description: "x".repeat(201) },
    ];
    for (const candidate of candidates) {
      let agentAccepts = true;
      try {
        checkAgentOptions(candidate);
      } catch {
        agentAccepts = false;
      }
      expect([candidate, agentAccepts]).toEqual([candidate, delegate.check({ description: "d", ...candidate })]);
    }
  });

  it("readFinal()'s RunView is the contract's run view, narrowed to the fields it reads", () => {
    const view = plain(RunViewSchema);
    const viewProperties = view.properties as Record<string, Schema>;
    const schema = readFinalRunSchema();
    const properties = schema.properties as Record<string, Schema>;
    expect(Object.keys(properties)).toEqual(["runId", "output", "refs"]);
    expect(properties.runId).toEqual(viewProperties.runId);
    for (const key of ["delivery", "value", "finalAvailable"]) {
      expect((properties.output!.properties as Schema)[key]).toEqual((viewProperties.output!.properties as Schema)[key]);
    }
    expect((properties.refs!.properties as Schema).final).toEqual((viewProperties.refs!.properties as Schema).final);
  });
});
