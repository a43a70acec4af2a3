import { mkdir, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { sessionsDir, type RunScope } from "./home.ts";
import { errorCode, readEvidenceTextAsync } from "./fsio.ts";
import { anotherProcess, ownIdentity } from "./process-identity.ts";
import { processGlobal } from "../../runtime/process-global.ts";

/**
 * Which sessions are open, so retention never removes a run of one. In this process: a set kept
 * on globalThis (an extension reload loads these modules again, the open sessions stay the same).
 * For other processes: a marker file `sessions/<key>/owner.json` naming the owning process, written
 * when a session opens and removed when it closes. A marker whose process (on this host) is gone
 * is stale; one from another host counts until it is older than the retention age.
 */
export const SESSION_MARKER = "owner.json";

function openSet(): Set<string> {
  return processGlobal("pi-flow.open-sessions", () => new Set<string>());
}

const keyOf = (home: string, project: string, session: string) => `${home}\0${project}\0${session}`;
const markerPath = (scope: RunScope) => join(sessionsDir(scope.home, scope.projectKey), scope.sessionKey, SESSION_MARKER);

/** Marker writes still under way, by session: a close waits for its open's write, or the write would land after the removal. */
const markerWrites = new Map<string, Promise<void>>();

/** The session opened in this process. The marker is written in the background; nothing waits on it. */
export function sessionOpened(scope: RunScope): Promise<void> {
  const key = keyOf(scope.home, scope.projectKey, scope.sessionKey);
  openSet().add(key);
  const path = markerPath(scope);
  const marker = JSON.stringify({ pid: process.pid, host: hostname(), ...ownIdentity(), openedAt: new Date().toISOString() });
  const written = mkdir(join(path, ".."), { recursive: true, mode: 0o700 })
    .then(() => writeFile(path, marker, { mode: 0o600 }))
    .catch(() => undefined) // housekeeping only: in-process liveness does not depend on it
    .finally(() => {
      if (markerWrites.get(key) === written) markerWrites.delete(key);
    });
  markerWrites.set(key, written);
  return written;
}

/** The session closed for good in this process (not a reload): its marker goes, after its write if that is still under way. */
export async function sessionClosed(scope: RunScope): Promise<void> {
  const key = keyOf(scope.home, scope.projectKey, scope.sessionKey);
  openSet().delete(key);
  await markerWrites.get(key);
  await rm(markerPath(scope), { force: true }).catch(() => undefined);
}

/** Whether a process of this host exists (EPERM: it does, owned by someone else). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM";
  }
}

/**
 * Whether a run's, session's, claim's or lock's owner is a live process of this host other than this
 * one: its ID exists, and is not another boot's or another start's (process-identity.ts).
 */
export function ownerAlive(owner: { pid?: unknown; host?: unknown; boot?: unknown; start?: unknown }): boolean {
  return typeof owner.pid === "number" && owner.host === hostname() && owner.pid !== process.pid && processExists(owner.pid) && !anotherProcess(owner);
}

/** Whether a session (by its directory under `sessions/`) is open here or in another live process. */
export async function sessionIsOpen(home: string, project: string, session: string, now: number, maxAgeMs: number): Promise<boolean> {
  if (openSet().has(keyOf(home, project, session))) return true;
  let marker: { pid?: unknown; host?: unknown; boot?: unknown; start?: unknown; openedAt?: unknown };
  try {
    marker = JSON.parse(await readEvidenceTextAsync(join(sessionsDir(home, project), session, SESSION_MARKER))) as typeof marker;
  } catch {
    return false;
  }
  if (typeof marker.pid !== "number") return false;
  if (marker.host === hostname()) return ownerAlive(marker);
  const opened = typeof marker.openedAt === "string" ? Date.parse(marker.openedAt) : NaN;
  return Number.isFinite(opened) && now - opened <= maxAgeMs; // another host: trust only long silence
}
