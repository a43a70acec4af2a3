import type { ModelRegistry } from "@earendil-works/pi-coding-agent";
import type { Api, Model } from "@earendil-works/pi-ai";
import { FlowError } from "../contract/errors.ts";
import { childModelRuntime } from "../harnesses/model-runtime.ts";
import { REPLAY_SETUP, type HarnessSettings } from "../harnesses/harness-settings.ts";
import { createPiHarness } from "../harnesses/pi.ts";
import { withRecording } from "../harnesses/recording.ts";
import { createReplayHarness, loadCassette } from "../harnesses/replay.ts";
import type { Harness } from "../harnesses/types.ts";

export const HARNESS_NAMES = ["pi", "claude", "codex", "replay"] as const;

/** Harnesses named by the contract whose adapters this version does not ship yet. */
const NOT_YET_AVAILABLE = new Set(["claude", "codex"]);

/**
 * Checks a harness name before launch: unknown is selection_invalid, absent is harness_unavailable
 * (replay is there only when a cassette is configured).
 */
export function checkHarnessName(name: string, settings: HarnessSettings = {}): string {
  if (!(HARNESS_NAMES as readonly string[]).includes(name)) {
    throw new FlowError("selection_invalid", `Unknown harness "${name}". Known: ${HARNESS_NAMES.join(", ")}.`);
  }
  if (name === "replay") {
    if (!settings.replay) throw new FlowError("harness_unavailable", `The replay harness has no cassette. ${REPLAY_SETUP}`);
    loadCassette(settings.replay.cassette); // a missing or malformed cassette is found before launch
  }
  if (NOT_YET_AVAILABLE.has(name)) {
    throw new FlowError("harness_unavailable", `The ${name} harness is not available in this version of pi-flow; use harness "pi".`);
  }
  return name;
}

/** The harness a child runs on: the one it asked for, or replay for every child when replay.every is set. */
export function selectHarness(requested: string, settings: HarnessSettings): string {
  if (settings.replay?.every && (HARNESS_NAMES as readonly string[]).includes(requested)) return checkHarnessName("replay", settings);
  return checkHarnessName(requested, settings);
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

export interface HarnessOptions {
  agentDir: string;
  /** Absent only for replay, which needs no model. */
  model: Model<Api> | undefined;
  registry: ModelRegistry;
  settings: HarnessSettings;
}

export async function createHarness(name: string, options: HarnessOptions): Promise<Harness> {
  checkHarnessName(name, options.settings);
  if (name === "replay") return createReplayHarness(options.settings.replay!);
  if (!options.model) throw new FlowError("model_unavailable", "The child has no model to run on.");
  const modelRuntime = await childModelRuntime(options.registry, options.model);
  return withRecording(createPiHarness({ agentDir: options.agentDir, model: options.model, modelRuntime }), options.settings.record);
}
