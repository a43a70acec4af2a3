import type { ModelRegistry } from "@earendil-works/pi-coding-agent";
import type { Api, Model } from "@earendil-works/pi-ai";
import { FlowError } from "../contract/errors.ts";
import { assertCliAvailable, cliHarnessState, createCliHarnessByName, isCliHarness, resolveCliModel } from "../harnesses/cli/index.ts";
import { childModelRuntime } from "../harnesses/model-runtime.ts";
import { createPiHarness } from "../harnesses/pi.ts";
import type { Harness, HarnessState } from "../harnesses/types.ts";

export const HARNESS_NAMES = ["pi", "claude", "codex", "replay"] as const;

/** Harnesses named by the contract whose adapters this version does not ship yet. */
const NOT_YET_AVAILABLE = new Set(["replay"]);

/**
 * Checks a harness before launch: an unknown name is selection_invalid; one this version lacks, or
 * an external CLI that is missing or unfit (its preflight), is harness_unavailable.
 */
export function checkHarnessName(name: string): string {
  if (!(HARNESS_NAMES as readonly string[]).includes(name)) {
    throw new FlowError("selection_invalid", `Unknown harness "${name}". Known: ${HARNESS_NAMES.join(", ")}.`);
  }
  if (NOT_YET_AVAILABLE.has(name)) {
    throw new FlowError("harness_unavailable", `The ${name} harness is not available in this version of pi-flow; use harness "pi".`);
  }
  if (isCliHarness(name)) assertCliAvailable(name);
  return name;
}

/** Each harness's state as help reports it: available or not, and why. */
export function harnessState(name: string): HarnessState {
  if (NOT_YET_AVAILABLE.has(name)) return { name, available: false, detail: "not available in this version of pi-flow" };
  if (isCliHarness(name)) return cliHarnessState(name);
  return { name, available: true, detail: "available: in-process, on the parent's model runtime" };
}

/** The model a child runs on: a model of Pi's registry (pi), or a CLI's own model name (undefined: the CLI's default). */
export type ChildModel = { kind: "pi"; model: Model<Api> } | { kind: "cli"; name: string | undefined };

/** How the run's launch evidence names the model. */
export const modelLabel = (model: ChildModel): string =>
  model.kind === "pi" ? `${model.model.provider}/${model.model.id}` : (model.name ?? "the CLI's default");

/** Resolves the model for the chosen harness: the registry's for pi, the CLI's own names for a CLI harness. */
export function resolveModelFor(
  harness: string,
  requested: string | undefined,
  parentModel: Model<Api> | undefined,
  registry: ModelRegistry,
): ChildModel {
  if (isCliHarness(harness)) return { kind: "cli", name: resolveCliModel(harness, requested) };
  return { kind: "pi", model: resolveChildModel(requested, parentModel, registry) };
}

/**
 * Resolves the model a child runs on: `provider/id` when asked for, else the profile's, else the
 * parent's. A model the registry does not know, or has no credentials for, is model_unavailable.
 */
export function resolveChildModel(
  requested: string | undefined,
  parentModel: Model<Api> | undefined,
  registry: ModelRegistry,
): Model<Api> {
  if (requested === undefined) {
    if (!parentModel) throw new FlowError("model_unavailable", "The parent session has no model for the child to use; pass model.");
    return parentModel;
  }
  const slash = requested.indexOf("/");
  if (slash <= 0 || slash === requested.length - 1) {
    throw new FlowError("model_unavailable", `Model "${requested}" is not provider/model-id.`);
  }
  const model = registry.find(requested.slice(0, slash), requested.slice(slash + 1));
  if (!model) throw new FlowError("model_unavailable", `Model "${requested}" is not known to this session.`);
  if (!registry.hasConfiguredAuth(model)) throw new FlowError("model_unavailable", `Model "${requested}" has no credentials.`);
  return model;
}

export async function createHarness(
  name: string,
  options: { agentDir: string; model: ChildModel; registry: ModelRegistry; resumeSessionId?: string },
): Promise<Harness> {
  checkHarnessName(name);
  const { model, resumeSessionId } = options;
  if (model.kind === "cli") {
    return createCliHarnessByName(name, {
      ...(model.name !== undefined ? { model: model.name } : {}),
      ...(resumeSessionId !== undefined ? { resumeSessionId } : {}),
    });
  }
  const modelRuntime = await childModelRuntime(options.registry, model.model);
  return createPiHarness({ agentDir: options.agentDir, model: model.model, modelRuntime });
}
