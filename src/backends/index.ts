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
import { processGlobal } from "../../runtime/process-global.ts";

export type { FleetChildren } from "./fleet.ts";
export type { RemoteChildRequest, RemoteChildResult } from "./remote-child.ts";
export { childWorkflowId, delegateWorkflowId } from "./names.ts";
export { resolveBackendSettings, type BackendSettings, type FlowBackendSettingsInput } from "./settings.ts";

type FleetTable = Map<string, { fleet: FleetChildren; holders: Set<string> }>;

/**
 * One coordinator per database URL in this process: its connection pools are shared by every run,
 * and it stays open while a session that launched on it is open (`holders`, by session ID). One
 * table for every copy of pi-flow a reload loads: a copy of its own would open a second coordinator
 * and never close the first.
 */
const fleetTable = (): FleetTable => processGlobal("pi-flow.fleets", (): FleetTable => new Map());

/** The fleet children of the dbos backend; undefined for local. The connection opens on first use; `holder` (a session ID) keeps it open. */
export function fleetFor(settings: BackendSettings, holder: string): FleetChildren | undefined {
  if (settings.kind === "local") return undefined;
  const fleets = fleetTable();
  let entry = fleets.get(settings.databaseUrl);
  if (!entry) {
    entry = { fleet: dbosCoordinator(settings.databaseUrl), holders: new Set() };
    fleets.set(settings.databaseUrl, entry);
  }
  entry.holders.add(holder);
  return entry.fleet;
}

/** The fleet as Pi's `flow` settings and the environment choose it, held by session `holder`; configuration_invalid when they cannot be read. */
export const configuredFleet = (flow: FlowBackendSettingsInput | undefined, env: Record<string, string | undefined>, holder: string) =>
  fleetFor(resolveBackendSettings(flow, env), holder);

/**
 * Session `holder` closed: each coordinator no other open session launched on is closed, its
 * connections with it (idle ones would otherwise stay until their idle timeout, and the pools for
 * good); a later launch opens a new one.
 */
export async function releaseFleets(holder: string): Promise<void> {
  const unheld: FleetChildren[] = [];
  const fleets = fleetTable();
  for (const [url, entry] of fleets) {
    if (!entry.holders.delete(holder) || entry.holders.size > 0) continue;
    fleets.delete(url);
    unheld.push(entry.fleet);
  }
  await Promise.all(unheld.map((fleet) => fleet.close()));
}

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
  const fleets = fleetTable();
  const open = [...fleets.values()];
  fleets.clear();
  await Promise.all(open.map(({ fleet }) => fleet.close()));
}
