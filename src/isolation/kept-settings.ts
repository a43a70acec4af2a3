// The cap on one child's kept changes (kept-size.ts) as the user sets it: `flow.isolation` in Pi's
// settings, else the environment, else KEPT_CHANGES_MAX. Read when the session binds; a malformed
// value refuses every worktree child before launch (configuration_invalid), never a child without one.
import { FlowError } from "../contract/errors.ts";
import { KEPT_CHANGES_MAX, type KeptChangesMax } from "./kept-size.ts";

/** The `flow` object of Pi's settings, as far as worktree isolation reads it. */
export interface FlowIsolationSettingsInput {
  isolation?: { maxKeptBytes?: unknown; maxKeptFiles?: unknown };
}

const invalid = (what: string) => new FlowError("configuration_invalid", `${what} (see docs/isolation.md, "How much is kept").`);

/** A whole number, 1 or more, from a setting (a number or digits) or the environment (digits); undefined when unset. */
function count(value: unknown, name: string, unit: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const parsed = typeof value === "number" ? value : typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < 1) throw invalid(`${name} must be a whole number of ${unit}, 1 or more, not ${JSON.stringify(value)}`);
  return parsed;
}

/**
 * `flow.isolation.maxKeptBytes` and `maxKeptFiles` win over PI_FLOW_MAX_KEPT_BYTES and
 * PI_FLOW_MAX_KEPT_FILES; either unset keeps its default (1 GiB, 100,000 files).
 */
export function resolveKeptChangesMax(flow: FlowIsolationSettingsInput | undefined, env: Readonly<Record<string, string | undefined>>): KeptChangesMax {
  const settings: unknown = flow?.isolation;
  if (settings !== undefined && (settings === null || typeof settings !== "object" || Array.isArray(settings))) throw invalid("flow.isolation must be an object");
  const { maxKeptBytes, maxKeptFiles } = (settings ?? {}) as NonNullable<FlowIsolationSettingsInput["isolation"]>;
  return {
    bytes: count(maxKeptBytes, "flow.isolation.maxKeptBytes", "bytes") ?? count(env.PI_FLOW_MAX_KEPT_BYTES, "PI_FLOW_MAX_KEPT_BYTES", "bytes") ?? KEPT_CHANGES_MAX.bytes,
    files: count(maxKeptFiles, "flow.isolation.maxKeptFiles", "files") ?? count(env.PI_FLOW_MAX_KEPT_FILES, "PI_FLOW_MAX_KEPT_FILES", "files") ?? KEPT_CHANGES_MAX.files,
  };
}
