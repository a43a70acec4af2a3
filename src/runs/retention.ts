import { randomBytes } from "node:crypto";
import { readdirSync, renameSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { projectsDir, sessionsDir } from "./home.ts";
import { isRunId, runIdTime } from "./ids.ts";
import { readRecord } from "./record.ts";
import type { RunRegistry } from "./registry.ts";

/**
 * Retention: delete runs older than `maxAgeMs` (by end time, else start time) and, per project,
 * all but the newest `maxRuns`. A live run is never touched: not one this process's registry
 * holds, and not an unfinished one whose owner process (recorded on the same host) still exists.
 * A doomed run directory is first renamed aside, so readers see it whole or not at all.
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

function readNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Whether a process with this ID exists on this host (one we may not signal still exists). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && "code" in error && error.code === "EPERM";
  }
}

interface Candidate {
  runsDir: string;
  runId: string;
  time: number;
  live: boolean;
}

function inspectRun(runsDir: string, runId: string, registry: RunRegistry, now: number, policy: RetentionPolicy): Candidate {
  const record = readRecord(join(runsDir, runId, "record.json"), runId);
  const started = runIdTime(runId);
  const ended = record?.endedAt ? Date.parse(record.endedAt) : NaN;
  let live = registry.isLive(runId);
  if (!live && record && record.status !== "done" && record.owner.pid !== process.pid) {
    const updated = Date.parse(record.updatedAt);
    live =
      record.owner.host === hostname()
        ? processExists(record.owner.pid)
        : !(Number.isFinite(updated) && now - updated > policy.maxAgeMs); // another host: trust only long silence
  }
  return { runsDir, runId, time: Number.isFinite(ended) ? ended : started, live };
}

function remove(candidate: Candidate): boolean {
  const aside = join(candidate.runsDir, `.prune-${candidate.runId}-${randomBytes(4).toString("hex")}`);
  try {
    renameSync(join(candidate.runsDir, candidate.runId), aside);
  } catch {
    return false;
  }
  rmSync(aside, { recursive: true, force: true });
  return true;
}

/** Prune one project (`projectKey`) or, without it, every project under the home. */
export function prune(
  home: string,
  policy: RetentionPolicy,
  opts: { registry: RunRegistry; projectKey?: string; now?: number },
): PruneReport {
  const now = opts.now ?? Date.now();
  const report: PruneReport = { removed: 0, kept: 0, live: 0 };
  const projects = opts.projectKey ? [opts.projectKey] : readNames(projectsDir(home));
  for (const project of projects) {
    const candidates: Candidate[] = [];
    const sessionsRoot = sessionsDir(home, project);
    for (const session of readNames(sessionsRoot)) {
      const runsDir = join(sessionsRoot, session, "runs");
      for (const name of readNames(runsDir)) {
        if (name.startsWith(".prune-"))
          rmSync(join(runsDir, name), { recursive: true, force: true }); // an earlier prune died
        else if (isRunId(name)) candidates.push(inspectRun(runsDir, name, opts.registry, now, policy));
      }
    }
    candidates.sort((a, b) => b.time - a.time || (a.runId < b.runId ? 1 : -1));
    candidates.forEach((candidate, index) => {
      if (candidate.live) {
        report.live++;
        return;
      }
      const expired = now - candidate.time > policy.maxAgeMs || index >= policy.maxRuns;
      if (expired && remove(candidate)) {
        opts.registry.release(candidate.runId); // a pruned run is gone from memory too
        report.removed++;
      } else report.kept++;
    });
  }
  return report;
}
