// external_help's answers: the contract index, one tool's contract and the guides, from the
// contract's own tables and this session's catalog. The Pi tool around them is tools/help.ts.
import { fail, succeed, TOOL_NAMES, type Envelope, type ToolName, CONTRACT_VERSION } from "../contract/envelope.ts";
import { ERROR_CODES } from "../contract/errors.ts";
import { RECEIPT_WARNINGS } from "../contract/warnings.ts";
import { quoteGiven } from "../runs/index.ts";
import { closestName } from "../../runtime/closest-name.ts";
import { type HelpInput, type HelpPayload } from "../contract/help-schema.ts";
import { CORE_RULES, TOOL_METADATA, TOOL_SCHEMAS } from "../contract/metadata.ts";
import type { HarnessState } from "../harnesses/index.ts";
import type { Catalog } from "../orchestrator/workflow/index.ts";
import {
  ERRORS_HELP,
  HARNESS_HELP,
  harnessesOverview,
  LIMITS_HELP,
  rolesHelp,
  workflowsHelp,
} from "./topics.ts";

export const HELP_TOPICS = ["contracts", "workflows", "harnesses", "limits", "errors", "roles"] as const;

export type HelpEnvelope = Envelope<HelpPayload, null>;

export interface HelpSources {
  /** Names of the tools registered in this session, asked at call time. */
  registeredTools(): readonly string[];
  /** WORKFLOW_HELPERS, served with external_workflow's contract. */
  workflowHelpers?: unknown;
  /**
   * A harness's state now (available with binary and version, or why not), asked at call time. A
   * CLI's `--version` runs without holding Pi; `signal` (the call's abort) ends it.
   */
  harnessState?(name: string, cwd: string, signal?: AbortSignal): Promise<HarnessState>;
  /** The saved workflows and roles the session's project can select, read at call time. */
  catalog?(cwd: string): Catalog;
}

const isToolName = (name: string): name is ToolName => (TOOL_NAMES as readonly string[]).includes(name);

/** The contract index is what a model reads first, on every session: the contract caps it at 1.5 KiB. */
export const CONTRACT_INDEX_MAX_BYTES = 1536;

function contractIndex(registered: ReadonlySet<string>) {
  return {
    contractVersion: CONTRACT_VERSION,
    tools: TOOL_NAMES.map((name) => ({ name, registered: registered.has(name), purpose: TOOL_METADATA[name].purpose })),
    rules: CORE_RULES,
    more: 'Types: describeTool("<name>") in codemode. Full contract: external_help({ topic: "contracts", tool }).',
  } as const;
}

// Checked when the module loads: a purpose or rule that grows past the cap fails every session's
// start and every test, not only the one that measures it.
const indexBytes = Buffer.byteLength(JSON.stringify(contractIndex(new Set(TOOL_NAMES))), "utf8");
if (indexBytes > CONTRACT_INDEX_MAX_BYTES) {
  throw new Error(`external_help's contract index is ${indexBytes} bytes, over its ${CONTRACT_INDEX_MAX_BYTES}-byte cap`);
}

/** Answers one help request. Everything it reports comes from its arguments and the contract; `signal` ends a harness's check. */
export async function answerHelp(input: HelpInput, sources: HelpSources, cwd = process.cwd(), signal?: AbortSignal): Promise<HelpEnvelope> {
  const unknown = (what: string, value: string, known: readonly string[]) => {
    const near = closestName(value, known);
    const guess = near === undefined ? "." : `; did you mean ${near}?`;
    return fail("external_help", "help", "selection_invalid", `Unknown ${what} ${quoteGiven(value)}${guess} Known: ${known.join(", ")}.`, null);
  };
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
      if (tool === undefined) return succeed("external_help", "help", { topic, index: contractIndex(registered) });
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
        // Asked together: two CLIs that are slow to answer `--version` cost one wait, not two.
        const harnesses = await Promise.all(Object.keys(HARNESS_HELP).map((name) => stateOf(name, cwd, signal)));
        const details = new Map(harnesses.map((state) => [state.name, state.detail]));
        return succeed("external_help", "help", { topic, text: harnessesOverview((name) => details.get(name) ?? ""), harnesses });
      }
      // Own keys only: "constructor" or "toString" is no harness, whatever a plain object answers.
      const text = Object.hasOwn(HARNESS_HELP, harness) ? HARNESS_HELP[harness] : undefined;
      if (text === undefined) return unknown("harness", harness, Object.keys(HARNESS_HELP));
      const state = await stateOf?.(harness, cwd, signal);
      if (!state) return succeed("external_help", "help", { topic, harness, text });
      return succeed("external_help", "help", { topic, harness, text: `${text}\nState now: ${state.detail}`, state });
    }
    case "workflows": {
      const workflows = sources.catalog?.(cwd).workflows;
      return succeed("external_help", "help", { topic, text: workflowsHelp(workflows), ...(workflows ? { workflows } : {}) });
    }
    case "limits":
      return succeed("external_help", "help", { topic, text: LIMITS_HELP });
    case "errors":
      return succeed("external_help", "help", { topic, text: ERRORS_HELP(ERROR_CODES, RECEIPT_WARNINGS) });
    case "roles": {
      const roles = sources.catalog?.(cwd).roles;
      return succeed("external_help", "help", { topic, text: rolesHelp(roles), ...(roles ? { roles } : {}) });
    }
  }
  return unknown("topic", topic, HELP_TOPICS);
}

/** The model reads text: topics as they are, contracts as compact JSON it can quote from. */
