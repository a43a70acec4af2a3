/**
 * The harness registry: which harnesses exist, whether one can run now, and the harness and model
 * a child runs on (chooseHarness, asked once before launch). create-harness.ts makes the harness
 * when the child starts.
 */
import type { ModelRegistry } from "@earendil-works/pi-coding-agent";
import type { Api, Model } from "@earendil-works/pi-ai";
import { FlowError } from "../contract/errors.ts";
import { assertCliAvailable, cliHarnessState, isCliHarness, resolveCliModel } from "./cli/index.ts";
import { REPLAY_SETUP, type HarnessSettings } from "./harness-settings.ts";
import { loadCassette } from "./replay.ts";
import type { ChildModel, HarnessState } from "./types.ts";

export const HARNESS_NAMES = ["pi", "claude", "codex", "replay", "stub"] as const;

/** Harnesses that answer with no model: a child on one runs on no model. */
const MODELLESS: ReadonlySet<string> = new Set(["replay", "stub"]);

/**
 * Checks a harness before launch: an unknown name is selection_invalid; replay without a usable
 * cassette, or an external CLI that is missing or unfit (its preflight), is harness_unavailable.
 * A CLI's preflight runs without holding Pi, and `signal` aborting ends it (rejecting with its reason).
 */
export async function checkHarnessName(name: string, settings: HarnessSettings = {}, signal?: AbortSignal): Promise<string> {
  if (!(HARNESS_NAMES as readonly string[]).includes(name)) {
    throw new FlowError("selection_invalid", `Unknown harness "${name}". Known: ${HARNESS_NAMES.join(", ")}.`);
  }
  if (name === "replay") {
    if (!settings.replay) throw new FlowError("harness_unavailable", `The replay harness has no cassette. ${REPLAY_SETUP}`);
    loadCassette(settings.replay.cassette, settings.replay.mode); // a missing or malformed cassette is found before launch
  }
  if (isCliHarness(name)) await assertCliAvailable(name, signal);
  return name;
}

/**
 * The harness a child runs on: the one it asked for, or stub (stub.every) or replay (replay.every)
 * for every child when set; stub wins, it is the one that needs nothing.
 */
async function selectHarness(requested: string, settings: HarnessSettings, signal: AbortSignal | undefined): Promise<string> {
  if (settings.stub?.every && (HARNESS_NAMES as readonly string[]).includes(requested)) return "stub";
  if (settings.replay?.every && (HARNESS_NAMES as readonly string[]).includes(requested)) return checkHarnessName("replay", settings);
  return checkHarnessName(requested, settings, signal);
}

/** Each harness's state as help reports it: available or not, and why. A CLI's `--version` runs without holding Pi; `signal` ends it. */
export async function harnessState(name: string, settings: HarnessSettings = {}, signal?: AbortSignal): Promise<HarnessState> {
  if (name === "replay") {
    return settings.replay
      ? { name, available: true, detail: `available: answers children from ${settings.replay.cassette}` }
      : { name, available: false, detail: `no cassette configured. ${REPLAY_SETUP}` };
  }
  if (isCliHarness(name)) return cliHarnessState(name, signal);
  if (name === "stub") return { name, available: true, detail: "available: answers children with values generated from their outputSchema, no model" };
  return { name, available: true, detail: "available: in-process, on the parent's model runtime" };
}

/** How the run's launch evidence names the model. */
const modelLabel = (model: ChildModel): string | null =>
  model.kind === "pi" ? `${model.model.provider}/${model.model.id}` : model.kind === "cli" ? (model.name ?? "the CLI's default") : null;

/** Resolves the model for the chosen harness: none for replay and stub, the CLI's own names for a CLI harness, else the registry's. */
function resolveModelFor(
  harness: string,
  requested: string | undefined,
  parentModel: Model<Api> | undefined,
  registry: ModelRegistry,
): ChildModel {
  if (MODELLESS.has(harness)) return { kind: "none" };
  if (isCliHarness(harness)) return { kind: "cli", name: resolveCliModel(harness, requested) };
  return { kind: "pi", model: resolveChildModel(requested, parentModel, registry) };
}

/**
 * Resolves the model a child runs on: `provider/id` when asked for, else the profile's, else the
 * parent's. A model the registry does not know, or has no credentials for, is model_unavailable.
 */
function resolveChildModel(
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

/** The harness a child runs on, its model, and how its launch evidence names the model. */
export interface ChosenHarness {
  harness: string;
  /** `none` for replay and stub: they answer with no model. */
  model: ChildModel;
  modelLabel: string | null;
}

/** What chooseHarness reads from the session: its harness settings, the parent's model and Pi's registry. */
export interface HarnessChoiceEnvironment {
  settings: HarnessSettings;
  parentModel: Model<Api> | undefined;
  registry: ModelRegistry;
  /** The call's abort: it ends a CLI's preflight. */
  signal?: AbortSignal;
}

/**
 * The harness and the model a child runs on, in the contract's order: the harness is checked
 * (selection_invalid, harness_unavailable) before the model (model_unavailable).
 */
export async function chooseHarness(asked: string, requestedModel: string | undefined, env: HarnessChoiceEnvironment): Promise<ChosenHarness> {
  const harness = await selectHarness(asked, env.settings, env.signal);
  const model = resolveModelFor(harness, requestedModel, env.parentModel, env.registry);
  return { harness, model, modelLabel: modelLabel(model) };
}
