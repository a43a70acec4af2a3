import { resolve } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { REPLAY_MODES, type ReplayMode } from "./cassette.ts";

export interface ReplaySettings {
  /** Absolute path of the cassette the replay harness answers from. */
  cassette: string;
  mode: ReplayMode;
  /** Every child replays, whatever harness it asked for (`flow run --replay`). */
  every: boolean;
}

export interface RecordSettings {
  /** Absolute path of the cassette every pi-harness child's answer is appended to. */
  cassette: string;
}

/** What the replay and record features are set to for one call. Empty: neither is on. */
export interface HarnessSettings {
  replay?: ReplaySettings;
  record?: RecordSettings;
}

/** The `flow` object of Pi's settings, as far as harnesses read it. */
export interface FlowHarnessSettingsInput {
  replay?: { cassette?: unknown; mode?: unknown; every?: unknown };
  record?: { cassette?: unknown };
}

/** How to turn the replay harness on, for the message of harness_unavailable. */
export const REPLAY_SETUP =
  'Configure a cassette: the environment variable PI_FLOW_REPLAY=<file.jsonl>, or the Pi setting "flow": { "replay": { "cassette": "<file.jsonl>" } } (record one with flow run --record <file.jsonl>).';

const invalid = (what: string) => new FlowError("configuration_invalid", `${what} (see docs/cli.md, "The replay harness").`);

function pathSetting(value: unknown, what: string, cwd: string): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") throw invalid(`${what} must be a file path`);
  return resolve(cwd, value);
}

function modeSetting(value: unknown, what: string): ReplayMode | undefined {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string" || !(REPLAY_MODES as readonly string[]).includes(value)) {
    throw invalid(`${what} must be ${REPLAY_MODES.join(" or ")}`);
  }
  return value as ReplayMode;
}

/**
 * Pi's settings (`flow.replay` { cassette, mode, every }, `flow.record` { cassette }) win over the
 * environment (PI_FLOW_REPLAY, PI_FLOW_REPLAY_MODE, PI_FLOW_RECORD); the `flow` command's flags are
 * settings it applies for its own run, so they win over both. Relative paths are from `cwd`.
 */
export function resolveHarnessSettings(
  flow: FlowHarnessSettingsInput | undefined,
  env: Record<string, string | undefined>,
  cwd: string,
): HarnessSettings {
  const replayCassette =
    pathSetting(flow?.replay?.cassette, "flow.replay.cassette", cwd) ?? pathSetting(env.PI_FLOW_REPLAY, "PI_FLOW_REPLAY", cwd);
  const recordCassette =
    pathSetting(flow?.record?.cassette, "flow.record.cassette", cwd) ?? pathSetting(env.PI_FLOW_RECORD, "PI_FLOW_RECORD", cwd);
  const mode = modeSetting(flow?.replay?.mode, "flow.replay.mode") ?? modeSetting(env.PI_FLOW_REPLAY_MODE, "PI_FLOW_REPLAY_MODE") ?? "strict";
  const every = flow?.replay?.every ?? false;
  if (typeof every !== "boolean") throw invalid("flow.replay.every must be true or false");
  const settings: HarnessSettings = {};
  if (replayCassette) settings.replay = { cassette: replayCassette, mode, every };
  if (recordCassette) settings.record = { cassette: recordCassette };
  return settings;
}
