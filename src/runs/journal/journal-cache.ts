import { closeSync, fstatSync, lstatSync, readFileSync, type BigIntStats } from "node:fs";
import type { Integrity } from "../../contract/run-schema.ts";
import { errorCode, openEvidence } from "../fsio.ts";
import { classifyJournalText, type JournalReport } from "./integrity.ts";

/**
 * Reading a journal's integrity without re-reading the journal. Two caches, both keyed on the
 * file's stamp (size, mtime and ctime in nanoseconds, inode) rather than on size alone, so a
 * rewrite of the same length (in place or by rename) is noticed:
 * - the record's `journal` field, written by the owner at settle: a settled run costs one stat;
 * - an in-process memo of the last classification, for what the record cannot cache (an
 *   interrupted run, a run whose record predates stamps, a journal found damaged).
 * The trade-off: a stamp is metadata. A same-size rewrite within one tick of the filesystem's
 * timestamp clock after the stamp was taken (milliseconds on ext4 or APFS, up to 2 s on FAT), or
 * media corruption that changes no metadata, is not seen until the file changes again. Catching
 * those would mean hashing the whole journal on every read, which the O(page) rule forbids.
 */
export interface JournalStamp {
  bytes: number;
  mtimeNs: string;
  ctimeNs: string;
  ino: string;
}

/** What the record keeps: the stamp the owner saw when it settled, and the integrity it wrote. */
export interface CachedJournal extends Partial<JournalStamp> {
  bytes: number;
  integrity: Integrity;
}

export function stampOf(stats: BigIntStats): JournalStamp {
  return {
    bytes: Number(stats.size),
    mtimeNs: stats.mtimeNs.toString(),
    ctimeNs: stats.ctimeNs.toString(),
    ino: stats.ino.toString(),
  };
}

/** A cache written without a full stamp (an older record) never matches: it would be size-only. */
export function sameStamp(cached: Partial<JournalStamp>, now: JournalStamp): boolean {
  return (
    cached.bytes === now.bytes && cached.mtimeNs === now.mtimeNs && cached.ctimeNs === now.ctimeNs && cached.ino === now.ino
  );
}

interface MemoEntry {
  runId: string;
  stamp: JournalStamp;
  report: JournalReport;
}

/** Bounded (least recently used goes first) so a long session listing thousands of runs stays small. */
const MEMO_LIMIT = 1024;
const memo = new Map<string, MemoEntry>();

function remember(path: string, entry: MemoEntry): void {
  memo.delete(path);
  memo.set(path, entry);
  if (memo.size > MEMO_LIMIT) {
    const oldest = memo.keys().next();
    if (!oldest.done) memo.delete(oldest.value);
  }
}

const unreadable = (error: unknown): JournalReport => ({
  integrity: "unknown",
  lines: 0,
  unreadable: true,
  reason: `journal not readable (${errorCode(error) ?? "error"})`,
});

/**
 * The report without the launch details and the final value its start and terminal lines may
 * carry: views never need them (journal-ends.ts reads them when asked), and the memo stays small.
 */
function withoutPayloads(report: JournalReport): JournalReport {
  if (report.start?.launch) {
    const { launch: _launch, ...start } = report.start;
    report.start = start;
  }
  if (report.terminal && "finalValue" in report.terminal) {
    const { finalValue: _value, ...terminal } = report.terminal;
    report.terminal = terminal;
  }
  return report;
}

/**
 * The journal's integrity, reading the file only when neither cache matches its current stamp.
 * `cached` is the settled record's entry, if any. A cache hit carries no start or terminal line:
 * the caller already has them from the record.
 */
export function journalReport(path: string, runId: string, cached?: CachedJournal): JournalReport {
  if (cached) {
    let stats: BigIntStats;
    try {
      stats = lstatSync(path, { bigint: true });
    } catch (error) {
      return unreadable(error);
    }
    if (stats.isFile() && sameStamp(cached, stampOf(stats))) {
      return { integrity: cached.integrity, lines: 0, unreadable: false };
    }
  }
  let fd: number;
  try {
    fd = openEvidence(path);
  } catch (error) {
    return unreadable(error);
  }
  try {
    // Stamp before reading: a write that lands during the read changes the stamp, so the next
    // reader misses and re-reads rather than trusting a memo of older text.
    const stamp = stampOf(fstatSync(fd, { bigint: true }));
    const hit = memo.get(path);
    // A copy: callers build views from the start and terminal lines and must not edit the memo.
    if (hit && hit.runId === runId && sameStamp(hit.stamp, stamp)) {
      remember(path, hit); // most recently used survives eviction
      return structuredClone(hit.report);
    }
    const report = withoutPayloads(classifyJournalText(readFileSync(fd, "utf8"), runId));
    remember(path, { runId, stamp, report: structuredClone(report) });
    return report;
  } catch (error) {
    return unreadable(error);
  } finally {
    closeSync(fd);
  }
}
