import { randomBytes } from "node:crypto";
import { lstat, readdir, rename, rm, rmdir, unlink } from "node:fs/promises";
import { readEvidenceTextAsync } from "./fsio.ts";
import { hostname } from "node:os";
import { join } from "node:path";
import { FLOW_SESSION_FILE, isSessionKey, projectsDir, sessionsDir } from "./home.ts";
import { isRunId, runIdTime } from "./ids.ts";
import { ownerAlive, SESSION_MARKER, sessionIsOpen } from "./live-sessions.ts";
import { parseRecord } from "./journal/record.ts";
import { readTerminalLine } from "./journal/journal-ends.ts";
import type { RunRegistry } from "./registry.ts";

/**
 * Retention: delete runs older than `maxAgeMs` (by end time, else start time) and, per project,
 * all but the newest `maxRuns`. A live run is never touched: not one this process's registry
 * holds, and not an unfinished one whose owner process (recorded on the same host) still exists.
 * Nor is any run of an open session (see live-sessions.ts), settled or not: its results may still
 * be waited for or be on their way to the parent. A doomed run directory is first renamed aside,
 * so readers see it whole or not at all. The pass reads and deletes asynchronously, so it never
 * holds up the session it runs in, whenever it runs. A closed session left with no run goes too
 * (its folder, with the `flow` command's session file and a stale marker): see clearSession.
 */
export interface RetentionPolicy {
  /** Delete runs that ended (or, if unfinished and ownerless, started) longer ago than this. Infinity: never. */
  maxAgeMs: number;
  /** Keep at most this many runs per project (newest first). Infinity: no count limit. */
  maxRuns: number;
}

export interface RetentionSettings {
  retention?: { maxAgeDays?: number; maxRuns?: number };
}

export const DEFAULT_RETENTION: RetentionPolicy = { maxAgeMs: 30 * 24 * 3600 * 1000, maxRuns: 500 };

const DAY_MS = 24 * 3600 * 1000;
/** How long a run with no record yet counts as one its creator is still writing. */
const RECORDLESS_GRACE_MS = 60_000;

function limit(raw: unknown, scale: number, fallback: number): number {
  const n = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
  if (typeof n !== "number" || !Number.isFinite(n) || n < 0) return fallback;
  return n === 0 ? Infinity : n * scale; // 0 means "no limit"
}

/**
 * Policy from settings (`retention.maxAgeDays`, `retention.maxRuns`), overridden by the environment
 * (`PI_FLOW_RETENTION_DAYS`, `PI_FLOW_RETENTION_MAX_RUNS`). 0 disables a limit; anything invalid
 * falls back to the default (30 days, 500 runs per project).
 */
export function resolveRetention(
  settings: RetentionSettings = {},
  env: Record<string, string | undefined> = {},
): RetentionPolicy {
  let maxAgeMs = limit(settings.retention?.maxAgeDays, DAY_MS, DEFAULT_RETENTION.maxAgeMs);
  let maxRuns = limit(settings.retention?.maxRuns, 1, DEFAULT_RETENTION.maxRuns);
  maxAgeMs = limit(env.PI_FLOW_RETENTION_DAYS, DAY_MS, maxAgeMs);
  maxRuns = limit(env.PI_FLOW_RETENTION_MAX_RUNS, 1, maxRuns);
  return { maxAgeMs, maxRuns: maxRuns === Infinity ? Infinity : Math.floor(maxRuns) };
}

export interface PruneReport {
  removed: number;
  kept: number;
  /** Runs kept because they are, or may be, live. */
  live: number;
}

async function readNames(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

interface Candidate {
  runsDir: string;
  runId: string;
  time: number;
  live: boolean;
}

async function inspectRun(
  runsDir: string,
  runId: string,
  registry: RunRegistry,
  now: number,
  policy: RetentionPolicy,
): Promise<Candidate> {
  const record = await readEvidenceTextAsync(join(runsDir, runId, "record.json")).then(
    (text) => parseRecord(text, runId),
    () => null,
  );
  const started = runIdTime(runId);
  const ended = record?.endedAt ? Date.parse(record.endedAt) : NaN;
  let live = registry.isLive(runId);
  // A record older than its journal (a power loss, a crash before the record's rewrite) is not
  // believed over a journal that ended: that run is over, and ended when its terminal line says.
  const terminal = !live && record?.status !== "done" ? readTerminalLine(join(runsDir, runId, "journal.jsonl"), runId) : undefined;
  // A run another process has just created has a start line and no record until that process's
  // group commit writes one (milliseconds), nor yet, perhaps, its session's marker: young enough, it is
  // taken for live. One whose creator died before its record stays until it is older than that.
  if (!live && !terminal && !record && now - started < RECORDLESS_GRACE_MS) live = true;
  if (!live && !terminal && record && record.status !== "done" && record.owner.pid !== process.pid) {
    const updated = Date.parse(record.updatedAt);
    live =
      record.owner.host === hostname()
        ? ownerAlive(record.owner)
        : !(Number.isFinite(updated) && now - updated > policy.maxAgeMs); // another host: trust only long silence
  }
  const endedAt = Number.isFinite(ended) ? ended : terminal ? Date.parse(terminal.endedAt) : NaN;
  return { runsDir, runId, time: Number.isFinite(endedAt) ? endedAt : started, live };
}

async function remove(candidate: Candidate): Promise<boolean> {
  const aside = join(candidate.runsDir, `.prune-${candidate.runId}-${randomBytes(4).toString("hex")}`);
  try {
    await rename(join(candidate.runsDir, candidate.runId), aside);
  } catch {
    return false;
  }
  await rm(aside, { recursive: true, force: true });
  return true;
}

/** What a session folder may hold besides its runs: anything else keeps the folder. */
const SESSION_FILES = new Set([FLOW_SESSION_FILE, SESSION_MARKER]);

interface SessionFolder {
  dir: string;
  runsDir: string;
  open: boolean;
  /** Runs this pass found in it, and removed from it. */
  runs: number;
  removed: number;
}

/** The newest modification time of the folder and of what it holds, or NaN when a name cannot be read. */
async function newestChange(dir: string, names: readonly string[]): Promise<number> {
  let newest = NaN;
  for (const path of [dir, ...names.map((name) => join(dir, name))]) {
    const stats = await lstat(path).catch(() => undefined);
    if (!stats) return NaN;
    newest = Number.isNaN(newest) ? stats.mtimeMs : Math.max(newest, stats.mtimeMs);
  }
  return newest;
}

/**
 * Removes a closed session's folder once no run is left in it: its runs were this pass's to remove,
 * or nothing in it changed for `maxAgeMs`. Without this, every `flow run` would leave its session
 * file (the command's tool calls and results) and marker behind forever. Only the files a session
 * folder is known to hold are unlinked, each by name, and the folders removed only when empty: a
 * run created meanwhile, a link or anything unknown keeps the folder.
 */
async function clearSession(folder: SessionFolder, home: string, project: string, session: string, now: number, policy: RetentionPolicy): Promise<void> {
  if (folder.open || folder.removed < folder.runs) return; // open, or runs are left in it
  if (!(await lstat(folder.dir).catch(() => undefined))?.isDirectory()) return;
  const names = await readNames(folder.dir);
  if (names.some((name) => name !== "runs" && !SESSION_FILES.has(name))) return;
  if ((await readNames(folder.runsDir)).length > 0) return;
  const emptied = folder.runs > 0 && folder.removed === folder.runs;
  if (!emptied && !(now - (await newestChange(folder.dir, names)) > policy.maxAgeMs)) return;
  if (names.includes("runs")) {
    const removed = await rmdir(folder.runsDir).then(() => true, () => false); // not empty (a run just created), or not a folder
    if (!removed) return;
  }
  // A session reopened since this pass looked keeps its marker and its file.
  if (await sessionIsOpen(home, project, session, now, policy.maxAgeMs)) return;
  for (const name of names) if (SESSION_FILES.has(name)) await unlink(join(folder.dir, name)).catch(() => undefined);
  await rmdir(folder.dir).catch(() => undefined);
}

/** Prune one project (`projectKey`) or, without it, every project under the home. */
export async function prune(
  home: string,
  policy: RetentionPolicy,
  opts: { registry: RunRegistry; projectKey?: string; now?: number },
): Promise<PruneReport> {
  const now = opts.now ?? Date.now();
  const report: PruneReport = { removed: 0, kept: 0, live: 0 };
  const projects = opts.projectKey ? [opts.projectKey] : await readNames(projectsDir(home));
  for (const project of projects) {
    const candidates: Candidate[] = [];
    const sessionsRoot = sessionsDir(home, project);
    const folders = new Map<string, SessionFolder>();
    for (const session of await readNames(sessionsRoot)) {
      const runsDir = join(sessionsRoot, session, "runs");
      const open = await sessionIsOpen(home, project, session, now, policy.maxAgeMs);
      const folder: SessionFolder = { dir: join(sessionsRoot, session), runsDir, open, runs: 0, removed: 0 };
      if (isSessionKey(session)) folders.set(session, folder);
      for (const name of await readNames(runsDir)) {
        if (name.startsWith(".prune-"))
          await rm(join(runsDir, name), { recursive: true, force: true }); // an earlier prune died
        else if (!isRunId(name)) continue;
        else if (open) candidates.push({ runsDir, runId: name, time: runIdTime(name), live: true });
        else candidates.push(await inspectRun(runsDir, name, opts.registry, now, policy));
        if (isRunId(name)) folder.runs++;
      }
    }
    candidates.sort((a, b) => b.time - a.time || (a.runId < b.runId ? 1 : -1));
    for (const [index, candidate] of candidates.entries()) {
      if (candidate.live) {
        report.live++;
        continue;
      }
      const expired = now - candidate.time > policy.maxAgeMs || index >= policy.maxRuns;
      if (expired && (await remove(candidate))) {
        opts.registry.release(candidate.runId); // a pruned run is gone from memory too
        report.removed++;
        for (const folder of folders.values()) if (folder.runsDir === candidate.runsDir) folder.removed++;
      } else report.kept++;
    }
    for (const [session, folder] of folders) await clearSession(folder, home, project, session, now, policy);
  }
  return report;
}
