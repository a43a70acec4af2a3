/**
 * The backend seam: where a workflow's agent() children and external_delegate's children run.
 * `local` (the default) is today's code and loads nothing of this folder beyond these few lines; `dbos` hands each child to the
 * `flow worker`s sharing a Postgres database. The SDK is imported only when a dbos fleet first
 * connects (dbos-load.ts): nothing here loads it.
 */
import { dbosCoordinator } from "./dbos-coordinator.ts";
import type { FleetChildren } from "./fleet.ts";
import { resolveBackendSettings, type BackendSettings, type FlowBackendSettingsInput } from "./settings.ts";
import { shownUrl } from "../runs/index.ts";

export type { FleetChildren } from "./fleet.ts";
export type { RemoteChildRequest, RemoteChildResult } from "./remote-child.ts";
export { childWorkflowId, delegateWorkflowId } from "./names.ts";
export { resolveBackendSettings, type BackendSettings, type FlowBackendSettingsInput } from "./settings.ts";

/** One coordinator per database URL in this process: its connection pool is shared by every run. */
const fleets = new Map<string, FleetChildren>();

/** The fleet children of the dbos backend; undefined for local. The connection opens on first use. */
export function fleetFor(settings: BackendSettings): FleetChildren | undefined {
  if (settings.kind === "local") return undefined;
  let fleet = fleets.get(settings.databaseUrl);
  if (!fleet) {
    fleet = dbosCoordinator(settings.databaseUrl);
    fleets.set(settings.databaseUrl, fleet);
  }
  return fleet;
}

/** The fleet as Pi's `flow` settings and the environment choose it; configuration_invalid when they cannot be read. */
export const configuredFleet = (flow: FlowBackendSettingsInput | undefined, env: Record<string, string | undefined> = process.env) =>
  fleetFor(resolveBackendSettings(flow, env));

/** One line for `/flow doctor` and `flow help`: which backend, and where. */
export function backendLine(flow: FlowBackendSettingsInput | undefined, env: Record<string, string | undefined> = process.env): string {
  try {
    const settings = resolveBackendSettings(flow, env);
    return settings.kind === "local" ? "local (children run in this process)" : `dbos on ${shownUrl(settings.databaseUrl)} (children run on flow workers)`;
  } catch (error) {
    return `unusable: ${(error as Error).message}`;
  }
}

/** The workers the configured dbos backend has seen, for `flow help` and `/flow doctor`; undefined on local or unreadable settings. */
export async function configuredWorkersLine(flow: FlowBackendSettingsInput | undefined, env: Record<string, string | undefined> = process.env): Promise<string | undefined> {
  let settings: BackendSettings;
  try {
    settings = resolveBackendSettings(flow, env);
  } catch {
    return undefined; // backendLine says why
  }
  const { workersLine } = await import("./workers-line.ts");
  return workersLine(settings);
}

/** Closes every database connection this process opened (tests, and a process about to exit). */
export async function closeFleets(): Promise<void> {
  const open = [...fleets.values()];
  fleets.clear();
  await Promise.all(open.map((fleet) => fleet.close()));
}
