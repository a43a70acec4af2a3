import { defineTool } from "@earendil-works/pi-coding-agent";
import { fail, succeed, toToolResult, TOOL_NAMES, type Envelope, type ToolName, CONTRACT_VERSION } from "../contract/envelope.ts";
import { ERROR_CODES } from "../contract/errors.ts";
import { HelpInputSchema, HelpOutputSchema, type HelpInput, type HelpPayload } from "../contract/help-schema.ts";
import { CORE_RULES, TOOL_METADATA, TOOL_SCHEMAS } from "../contract/metadata.ts";
import type { HarnessState } from "../harnesses/types.ts";
import { abortIfSignalled } from "./abort.ts";
import {
  ERRORS_HELP,
  HARNESS_HELP,
  harnessesOverview,
  LIMITS_HELP,
  ROLES_HELP,
  WORKFLOWS_HELP,
} from "./help-topics.ts";
import { helpRenderers } from "../ui/query-renderers.ts";

export const HELP_TOPICS = ["contracts", "workflows", "harnesses", "limits", "errors", "roles"] as const;

export type HelpEnvelope = Envelope<HelpPayload, null>;

export interface HelpSources {
  /** Names of the tools registered in this session, asked at call time. */
  registeredTools(): readonly string[];
  /** WORKFLOW_HELPERS, served with external_workflow's contract. */
  workflowHelpers?: unknown;
  /** A harness's state now (available with binary and version, or why not), asked at call time. */
  harnessState?(name: string): HarnessState;
}

const isToolName = (name: string): name is ToolName => (TOOL_NAMES as readonly string[]).includes(name);

/** Answers one help request. Everything it reports comes from its arguments and the contract. */
export function answerHelp(input: HelpInput, sources: HelpSources): HelpEnvelope {
  const unknown = (what: string, value: string, known: readonly string[]) =>
    fail("external_help", "help", "selection_invalid", `Unknown ${what} "${value}". Known: ${known.join(", ")}.`, null);
  const registered = new Set(sources.registeredTools());
  const { topic, tool, harness } = input;

  if (!(HELP_TOPICS as readonly string[]).includes(topic)) return unknown("topic", topic, HELP_TOPICS);
  if (tool !== undefined && topic !== "contracts") {
    return fail("external_help", "help", "request_invalid", `tool goes with topic "contracts", not "${topic}".`, null);
  }
  if (harness !== undefined && topic !== "harnesses") {
    return fail("external_help", "help", "request_invalid", `harness goes with topic "harnesses", not "${topic}".`, null);
  }

  switch (topic) {
    case "contracts": {
      if (tool === undefined) {
        const index = {
          contractVersion: CONTRACT_VERSION,
          tools: TOOL_NAMES.map((name) => ({ name, registered: registered.has(name), purpose: TOOL_METADATA[name].purpose })),
          rules: CORE_RULES,
          more: 'Types: describeTool("<name>") in codemode. Full contract: external_help({ topic: "contracts", tool }).',
        } as const;
        return succeed("external_help", "help", { topic, index });
      }
      if (!isToolName(tool)) return unknown("tool", tool, TOOL_NAMES);
      const meta = TOOL_METADATA[tool];
      const contract = {
        tool,
        contractVersion: CONTRACT_VERSION,
        registered: registered.has(tool),
        actions: meta.actions,
        purpose: meta.purpose,
        input: TOOL_SCHEMAS[tool].input,
        output: TOOL_SCHEMAS[tool].output,
        semantics: meta.semantics,
        examples: meta.examples,
        ...(tool === "external_workflow" && sources.workflowHelpers !== undefined ? { helpers: sources.workflowHelpers } : {}),
      } as const;
      return succeed("external_help", "help", { topic, tool, contract });
    }
    case "harnesses": {
      const stateOf = sources.harnessState;
      if (harness === undefined) {
        if (!stateOf) return succeed("external_help", "help", { topic, text: harnessesOverview() });
        const harnesses = Object.keys(HARNESS_HELP).map((name) => stateOf(name));
        const details = new Map(harnesses.map((state) => [state.name, state.detail]));
        return succeed("external_help", "help", { topic, text: harnessesOverview((name) => details.get(name) ?? ""), harnesses });
      }
      const text = HARNESS_HELP[harness];
      if (text === undefined) return unknown("harness", harness, Object.keys(HARNESS_HELP));
      const state = stateOf?.(harness);
      if (!state) return succeed("external_help", "help", { topic, harness, text });
      return succeed("external_help", "help", { topic, harness, text: `${text}\nState now: ${state.detail}`, state });
    }
    case "workflows":
      return succeed("external_help", "help", { topic, text: WORKFLOWS_HELP });
    case "limits":
      return succeed("external_help", "help", { topic, text: LIMITS_HELP });
    case "errors":
      return succeed("external_help", "help", { topic, text: ERRORS_HELP(ERROR_CODES) });
    case "roles":
      return succeed("external_help", "help", { topic, text: ROLES_HELP });
  }
  return unknown("topic", topic, HELP_TOPICS);
}

/** The model reads text: topics as they are, contracts as compact JSON it can quote from. */
function contentFor(envelope: HelpEnvelope): string {
  if (!envelope.ok) return `external_help failed (${envelope.error.code}): ${envelope.error.message}`;
  const data = envelope.data;
  if ("text" in data) return data.text;
  if ("index" in data) return JSON.stringify(data.index);
  return JSON.stringify(data.contract);
}

export function createHelpTool(sources: HelpSources) {
  return defineTool({
    // Drawn for a person watching the TUI; print, JSON and RPC modes never call renderers.
    ...helpRenderers,
    name: "external_help",
    label: "Flow help",
    description:
      "Discover pi-flow's contract. topic \"contracts\" returns an index of the Flow tools; add tool for one tool's input and output schemas, semantics and validated examples. Topics workflows, harnesses (optionally with harness), limits, errors and roles return guides. Read-only.",
    promptSnippet: "Look up pi-flow's tool contracts and guides for delegation and workflows",
    parameters: HelpInputSchema,
    outputSchema: HelpOutputSchema,
    async execute(_toolCallId, params, signal) {
      abortIfSignalled(signal);
      const envelope = answerHelp(params, sources);
      const details = { topic: params.topic, tool: params.tool, harness: params.harness };
      return toToolResult(envelope, contentFor(envelope), details);
    },
  });
}
