// One session's settings as one value. Pi's `flow` settings, the environment pi-flow reads and the
// project's trust are read once when the session binds (its start, and again after /reload: Pi
// reloads the extension, which binds anew), never per delegation. Pi itself only changes them on
// a reload or restart, so a value read at bind is what every launch of the session would read.
import { getAgentDir, type ExtensionAPI, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FlowBackendSettingsInput } from "../../backends/index.ts";
import { resolveHarnessSettings, harnessState, type FlowHarnessSettingsInput, type HarnessSettings, type HarnessState } from "../../harnesses/index.ts";
import { resolveKeptChangesMax, type FlowIsolationSettingsInput, type KeptChangesMax } from "../../isolation/index.ts";
import { resolveFlowHome, resolveRetention, type RetentionPolicy, type RetentionSettings } from "../../runs/index.ts";
import { sessionProjectTrusted } from "../../trust/project-trust.ts";

/** The `flow` object of Pi's settings: retention, replay, record, stub, backend, isolation and telemetry. */
export type FlowSettingsInput = RetentionSettings & FlowHarnessSettingsInput & FlowBackendSettingsInput & FlowIsolationSettingsInput & { telemetry?: { content?: unknown } };

/** A setting as read: its value, or the error (configuration_invalid) every use of it throws. */
export type SettingRead<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

export interface SessionSettings {
  /** The session's folder as it bound: relative cassette paths are from here. */
  readonly cwd: string;
  readonly agentDir: string;
  /** Where this session's runs live (PI_FLOW_HOME, else the agent directory's `flow`). */
  readonly flowHome: string;
  /** The environment as the session bound, for the settings that fall back to it. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly flow: Readonly<FlowSettingsInput>;
  readonly retention: RetentionPolicy;
  /**
   * Whether the project counts as trusted for pi-flow (project-trust.ts): Pi's decision as the
   * session started, and pi-flow's own for its files. A trust store that cannot be read is an error
   * each launch reports.
   */
  readonly projectTrusted: SettingRead<boolean>;
  /** Replay, stub and record (harness-settings.ts); malformed is configuration_invalid at launch. */
  readonly harnesses: SettingRead<HarnessSettings>;
  /** The most a worktree child's kept changes may hold (kept-settings.ts); malformed is configuration_invalid at a worktree child's launch. */
  readonly keptChangesMax: SettingRead<KeptChangesMax>;
}

function read<T>(make: () => T): SettingRead<T> {
  try {
    return Object.freeze({ ok: true, value: make() });
  } catch (error) {
    return Object.freeze({ ok: false, error });
  }
}

/** The value, or the error it was read with. */
export function settingValue<T>(setting: SettingRead<T>): T {
  if (!setting.ok) throw setting.error;
  return setting.value;
}

/** Settings are JSON: frozen all the way down, a caller cannot change them for the next one. */
function deepFrozen<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const part of Object.values(value)) deepFrozen(part);
    Object.freeze(value);
  }
  return value;
}

/** Reads the session's settings; nothing here throws (a bad setting is kept as its error). */
export function readSessionSettings(pi: Pick<ExtensionAPI, "getSettings">, ctx: Pick<ExtensionContext, "cwd" | "isProjectTrusted">): SessionSettings {
  const agentDir = getAgentDir();
  const env = Object.freeze({ ...process.env });
  // A copy: freezing Pi's own settings object would break Pi.
  const flow = deepFrozen(structuredClone((pi.getSettings() as { flow?: FlowSettingsInput }).flow ?? {}));
  const piTrusted = ctx.isProjectTrusted();
  return Object.freeze({
    cwd: ctx.cwd,
    agentDir,
    flowHome: resolveFlowHome(env, agentDir),
    env,
    flow,
    retention: Object.freeze(resolveRetention(flow, env)),
    projectTrusted: read(() => sessionProjectTrusted(ctx.cwd, agentDir, piTrusted)),
    harnesses: read(() => resolveHarnessSettings(flow, env, ctx.cwd)),
    keptChangesMax: read(() => resolveKeptChangesMax(flow, env)),
  });
}

/** A harness's state for help and `/flow doctor`; settings that cannot be read make replay unavailable, saying why. */
export async function harnessStateIn(settings: SessionSettings, name: string, signal?: AbortSignal): Promise<HarnessState> {
  if (!settings.harnesses.ok) {
    const { error } = settings.harnesses;
    return { name, available: false, detail: error instanceof Error ? error.message : String(error) };
  }
  return harnessState(name, settings.harnesses.value, signal);
}
