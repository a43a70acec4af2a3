import { randomBytes } from "node:crypto";
import { readdir, rename, rm } from "node:fs/promises";
import { readEvidenceTextAsync } from "./fsio.ts";
import { hostname } from "node:os";
import { join } from "node:path";
import { projectsDir, sessionsDir } from "./home.ts";
import { isRunId, runIdTime } from "./ids.ts";
import { ownerAlive, sessionIsOpen } from "./live-sessions.ts";
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
 * holds up the session it runs in, whenever it runs.
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
    for (const session of await readNames(sessionsRoot)) {
      const runsDir = join(sessionsRoot, session, "runs");
      const open = await sessionIsOpen(home, project, session, now, policy.maxAgeMs);
      for (const name of await readNames(runsDir)) {
        if (name.startsWith(".prune-"))
          await rm(join(runsDir, name), { recursive: true, force: true }); // an earlier prune died
        else if (!isRunId(name)) continue;
        else if (open) candidates.push({ runsDir, runId: name, time: runIdTime(name), live: true });
        else candidates.push(await inspectRun(runsDir, name, opts.registry, now, policy));
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
      } else report.kept++;
    }
  }
  return report;
}
