import { readEvidenceText } from "../fsio.ts";
import type { RunOutcome } from "../../contract/run-schema.ts";
import type { RunKind } from "../ids.ts";
import type { CachedJournal } from "./journal-cache.ts";
import type { ChangeStats, ChildCounts, FinalMeta, RunError, TaskIdentity, Usage } from "./journal.ts";

/**
 * The run record: a small JSON summary replaced atomically on every state change, so a listing can
 * show a run without reading its journal. It is a cache of the journal, not the truth: a reader
 * that finds the journal terminal and the record not (a crash between the two writes) believes the
 * journal, and a reader that finds no record rebuilds what it can from the journal's start line.
 */
export const RECORD_VERSION = 1;

export interface RunRecord {
  v: number;
  runId: string;
  kind: RunKind;
  task: TaskIdentity;
  background: boolean;
  status: "queued" | "running" | "done";
  outcome: RunOutcome | null;
  error?: RunError;
  startedAt: string;
  endedAt?: string;
  children?: ChildCounts;
  usage?: Usage;
  changes?: ChangeStats;
  final?: FinalMeta;
  /** A small final value (`final.inJournal`), copied from the terminal line: a view reads it here first. */
  finalValue?: unknown;
  outputBytes: number;
  diagnosticsBytes: number;
  /**
   * The journal's stamp (size, mtime, ctime, inode) and integrity when the run settled: a reader
   * whose stat of the journal gives the same stamp skips re-reading it. See journal-cache.ts.
   */
  journal?: CachedJournal;
  /** Which process owns the run; retention uses it to leave another process's live run alone. Private. */
  /** The owning process: its ID and host, and on Linux its boot and start time (process-identity.ts). */
  owner: { pid: number; host: string; boot?: string; start?: string };
  updatedAt: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Null when absent, unreadable or not a record of this run: the caller falls back to the journal. */
export function readRecord(path: string, runId: string): RunRecord | null {
  let text: string;
  try {
    text = readEvidenceText(path);
  } catch {
    return null;
  }
  return parseRecord(text, runId);
}

/** A record's text as a record of `runId`, or null when it is not one. */
export function parseRecord(text: string, runId: string): RunRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(value) || value.v !== RECORD_VERSION || value.runId !== runId) return null;
  if (!isObject(value.task) || typeof value.task.description !== "string") return null;
  if (value.status !== "queued" && value.status !== "running" && value.status !== "done") return null;
  if (typeof value.startedAt !== "string" || !isObject(value.owner)) return null;
  // Read as a time by every listing of the runs: one forged as an object failed them all.
  if (value.endedAt !== undefined && typeof value.endedAt !== "string") return null;
  return value as unknown as RunRecord;
}
