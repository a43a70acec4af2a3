// external_help as a Pi tool: the answers come from src/help/, the row a person sees from ui/.
import { defineTool } from "@earendil-works/pi-coding-agent";
import { nullFieldsAsAbsent } from "./null-fields.ts";
import { flowToolResult } from "./tool-result.ts";
import { HelpInputSchema, HelpOutputSchema } from "../contract/help-schema.ts";
import { answerHelp, type HelpEnvelope, type HelpSources } from "../help/answer.ts";
import { helpRenderers } from "../ui/index.ts";
import { abortIfSignalled } from "./abort.ts";

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
    prepareArguments: nullFieldsAsAbsent,
    outputSchema: HelpOutputSchema,
    async execute(_toolCallId, params, signal, _onUpdate, ctx) {
      abortIfSignalled(signal);
      const envelope = await answerHelp(params, sources, ctx.cwd, signal);
      // Aborted while a CLI's --version ran: the call ends aborted, not with a "cancelled" state.
      abortIfSignalled(signal);
      const details = { topic: params.topic, tool: params.tool, harness: params.harness };
      return flowToolResult(envelope, contentFor(envelope), details);
    },
  });
}
