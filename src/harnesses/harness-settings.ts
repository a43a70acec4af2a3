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

export interface StubSettings {
  /** Values generated from outputSchemas are the same for the same seed. */
  seed: number;
  /** Every child is stubbed, whatever harness it asked for (`flow run --stub`). */
  every: boolean;
}

/** The stub harness needs no setting: a child that asks for it gets this seed. */
export const DEFAULT_STUB: StubSettings = { seed: 0, every: false };

/** What the replay, stub and record features are set to for one call. Empty: none is on. */
export interface HarnessSettings {
  replay?: ReplaySettings;
  stub?: StubSettings;
  record?: RecordSettings;
}

/** The `flow` object of Pi's settings, as far as harnesses read it. */
export interface FlowHarnessSettingsInput {
  replay?: { cassette?: unknown; mode?: unknown; every?: unknown };
  record?: { cassette?: unknown };
  stub?: unknown;
}

/** How to turn the replay harness on, for the message of harness_unavailable. */
export const REPLAY_SETUP =
  'Configure a cassette: the environment variable PI_FLOW_REPLAY=<file.jsonl>, or the Pi setting "flow": { "replay": { "cassette": "<file.jsonl>" } } (record one with flow run --record <file.jsonl>).';

const invalid = (what: string, section = "The replay harness") => new FlowError("configuration_invalid", `${what} (see docs/cli.md, "${section}").`);

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

const STUB_SECTION = "The stub harness";

/** `flow.stub`: true, or { seed, every }; every defaults to true, the point of the setting. */
function stubSetting(value: unknown): StubSettings | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { seed: 0, every: true };
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw invalid("flow.stub must be true or { seed, every }", STUB_SECTION);
  const { seed = 0, every = true } = value as { seed?: unknown; every?: unknown };
  if (typeof seed !== "number" || !Number.isSafeInteger(seed) || seed < 0) throw invalid("flow.stub.seed must be a non-negative integer", STUB_SECTION);
  if (typeof every !== "boolean") throw invalid("flow.stub.every must be true or false", STUB_SECTION);
  return { seed, every };
}

/**
 * Pi's settings (`flow.replay` { cassette, mode, every }, `flow.stub`, `flow.record` { cassette }) win over the
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
  const stub = stubSetting(flow?.stub);
  if (stub) settings.stub = stub;
  if (recordCassette) settings.record = { cassette: recordCassette };
  return settings;
}
