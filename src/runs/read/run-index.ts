import { readdirSync, statSync } from "node:fs";
import { isRunId, runKindOf, type RunKind } from "../ids.ts";

/**
 * The saved run IDs of one session's runs directory, newest first per kind, kept in memory so a
 * listing costs its page, not a scan and sort of the whole directory. The index is checked against
 * the directory's modification time (nanoseconds) on every use: any change this process did not
 * record itself (another process pruning, a run created elsewhere) makes it scan once again. Run
 * IDs begin with their start time, so the names alone give the order.
 */
interface DirIndex {
  mtimeNs: bigint;
  byKind: Record<RunKind, string[]>;
}

const indexes = new Map<string, DirIndex>();

function mtimeOf(dir: string): bigint | undefined {
  return statSync(dir, { bigint: true, throwIfNoEntry: false })?.mtimeNs;
}

function scan(dir: string, mtimeNs: bigint): DirIndex {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    names = [];
  }
  const byKind: Record<RunKind, string[]> = { agent: [], workflow: [] };
  for (const id of names.filter(isRunId).sort().reverse()) byKind[runKindOf(id)].push(id);
  return { mtimeNs, byKind };
}

/** Saved run IDs of `kind` in `dir`, newest first. Do not modify the array. */
export function savedRunIds(dir: string, kind: RunKind): readonly string[] {
  const mtimeNs = mtimeOf(dir);
  if (mtimeNs === undefined) {
    indexes.delete(dir);
    return [];
  }
  let index = indexes.get(dir);
  if (!index || index.mtimeNs !== mtimeNs) {
    index = scan(dir, mtimeNs);
    indexes.set(dir, index);
  }
  return index.byKind[kind];
}

/**
 * Creates a run's directory through the index: when the index was current just before, the new
 * ID is inserted (in order) and the index stays current, so creating runs never forces a rescan.
 */
export function createRunDirectory(dir: string, runId: string, create: () => void): void {
  // With no index of this directory yet (nothing listed it), there is nothing to keep current:
  // the first listing scans. A fan-out of children then pays no stat for an index nobody reads.
  if (!indexes.has(dir)) return create();
  const before = mtimeOf(dir);
  create();
  const index = indexes.get(dir);
  if (!index || before === undefined || index.mtimeNs !== before) return;
  const after = mtimeOf(dir);
  if (after === undefined) return;
  const list = index.byKind[runKindOf(runId)];
  list.splice(insertionPoint(list, runId), 0, runId);
  index.mtimeNs = after;
}

/** Index of the first ID older than `runId` in a newest-first list (binary search). */
export function insertionPoint(newestFirst: readonly string[], runId: string): number {
  let low = 0;
  let high = newestFirst.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (newestFirst[mid]! > runId) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Whether `runId` is in a newest-first list (binary search). */
export function containsRunId(newestFirst: readonly string[], runId: string): boolean {
  return newestFirst[insertionPoint(newestFirst, runId)] === runId;
}
