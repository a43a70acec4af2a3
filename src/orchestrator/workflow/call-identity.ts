import { hash } from "node:crypto";
import type { AgentOptions } from "../../../runtime/index.ts";
import { redactText } from "../../runs/index.ts";

/**
 * What a workflow's journal records of each agent() and tools.* call, so that a resumed run can
 * tell whether its script asks for the same thing at the same index (see docs/durability.md).
 */
export interface CallIdentity {
  kind: "agent" | "tool";
  /** The role or subagent type of an agent() call; the tool's name of a tools.* call. */
  target: string;
  /** agent(): the child's label (given, or derived from the prompt); tools.*: the tool's name. */
  description: string;
  /** sha256 of the call's arguments as JSON, shortened: equal arguments hash equal. */
  argsHash: string;
}

/**
 * The sandbox hands the host plain JSON built by a deterministic script, so the same script makes
 * the same keys in the same order: JSON.stringify is canonical enough here.
 */
export function hashArgs(value: unknown): string {
  return hash("sha256", JSON.stringify(value ?? null), "hex").slice(0, 24);
}

/**
 * The default label of an agent() child, as its run's description says it: the prompt's start,
 * redacted before it is cut (a token cut in two leaves a piece no rule recognises).
 */
export function agentLabel(options: Partial<AgentOptions>, index: number): string {
  if (typeof options.description === "string") return options.description;
  const prompt = typeof options.prompt === "string" ? redactText(options.prompt).text : "";
  return `agent ${index + 1}: ${prompt.replace(/[\s\u0000]+/g, " ").trim().slice(0, 60)}`;
}

/** agent()'s options as the script passed them; options that are not an object still hash. */
export function agentIdentity(options: AgentOptions, index: number): CallIdentity {
  const given: Partial<AgentOptions> = options !== null && typeof options === "object" && !Array.isArray(options) ? options : {};
  const target = typeof given.role === "string" ? given.role : typeof given.subagent_type === "string" ? given.subagent_type : "";
  return { kind: "agent", target, description: agentLabel(given, index), argsHash: hashArgs(options) };
}

export function toolIdentity(name: string, args: unknown): CallIdentity {
  return { kind: "tool", target: name, description: name, argsHash: hashArgs(args) };
}

/** "agent() call 3 (role reviewer, "check a.ts", args 1f0c…)" for divergence messages. */
export function describeCall(identity: Pick<CallIdentity, "kind" | "target" | "description" | "argsHash">, index: number): string {
  if (identity.kind === "tool") return `tools.${identity.target} call ${index} (args ${identity.argsHash})`;
  const target = identity.target === "" ? "" : `${identity.target}, `;
  return `agent() call ${index} (${target}${JSON.stringify(identity.description)}, args ${identity.argsHash})`;
}

/** Characters of a description a refusal quotes: enough to tell calls apart, not a whole paragraph. */
const REFUSAL_DESCRIPTION_CHARS = 60;

/**
 * A refused agent() call's message, naming the call by its number (counting the run's agent() and
 * tools.* calls from 1) and description: "agent() does not take x." becomes
 * 'agent() call 2 ("Second look") does not take x.', any other message follows the name.
 */
export function nameAgentRefusal(message: string, index: number, description: string): string {
  const shown = description.length > REFUSAL_DESCRIPTION_CHARS ? `${description.slice(0, REFUSAL_DESCRIPTION_CHARS)}…` : description;
  const name = `agent() call ${index + 1} (${JSON.stringify(shown)})`;
  return message.startsWith("agent() ") ? `${name} ${message.slice("agent() ".length)}` : `${name}: ${message}`;
}
