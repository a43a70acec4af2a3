/**
 * Makes the harness a prepared child runs on, once the child has its slot: the harness and model
 * were chosen, and every check passed, before launch (registry.ts's chooseHarness).
 */
import type { ModelRegistry } from "@earendil-works/pi-coding-agent";
import { FlowError } from "../contract/errors.ts";
import { createCliHarnessByName } from "./cli/index.ts";
import { DEFAULT_STUB, type HarnessSettings } from "./harness-settings.ts";
import { childModelRuntime } from "./model-runtime.ts";
import { createPiHarness } from "./pi.ts";
import { withRecording } from "./recording.ts";
import { createReplayHarness } from "./replay.ts";
import { createStubHarness } from "./stub.ts";
import type { ChildModel, Harness } from "./types.ts";

export interface HarnessOptions {
  agentDir: string;
  model: ChildModel;
  registry: ModelRegistry;
  settings: HarnessSettings;
  /** A CLI session to continue (resume of a claude or codex run). */
  resumeSessionId?: string;
}

/** Makes the harness a prepared child runs on; `name` and `model` are chooseHarness's. */
export async function createHarness(name: string, options: HarnessOptions): Promise<Harness> {
  const { model, resumeSessionId } = options;
  if (name === "replay") return createReplayHarness(options.settings.replay!);
  if (name === "stub") {
    const stub = options.settings.stub ?? DEFAULT_STUB;
    return withRecording(createStubHarness(stub), options.settings.record, stub.seed);
  }
  if (model.kind === "cli") {
    return createCliHarnessByName(name, {
      ...(model.name !== undefined ? { model: model.name } : {}),
      ...(resumeSessionId !== undefined ? { resumeSessionId } : {}),
    });
  }
  if (model.kind !== "pi") throw new FlowError("model_unavailable", "The child has no model to run on.");
  const modelRuntime = await childModelRuntime(options.registry, model.model);
  return withRecording(createPiHarness({ agentDir: options.agentDir, model: model.model, modelRuntime }), options.settings.record);
}
