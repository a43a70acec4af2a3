import { FlowError } from "../../contract/errors.ts";
import type { Integrity, RunOutcome, RunStatus } from "../../contract/run-schema.ts";
import { lstatOrNull, statOrNull } from "../fsio.ts";
import { runFiles, type RunScope } from "../home.ts";
import { runKindOf, type RunKind } from "../ids.ts";
import type { JournalReport } from "../journal/integrity.ts";
import { journalReport } from "../journal/journal-cache.ts";
import { readTerminalLine } from "../journal/journal-ends.ts";
import type { ChangeStats, ChildCounts, FinalMeta, RunError, TaskIdentity, Usage } from "../journal/journal.ts";
import { readRecord } from "../journal/record.ts";
import type { MemoryFinal, RunRegistry } from "../registry.ts";

/**
 * The most any text of a run's task identity holds: pi-flow writes descriptions of at most 200
 * characters and names and IDs shorter still, so a longer one was written by someone else (a
 * forged or damaged record), and every list row, receipt and report would repeat it.
 */
const MAX_TASK_TEXT = 200;

/** `task` as read from disk, each text cut to MAX_TASK_TEXT (the same object when none is longer). */
function boundedTask(task: TaskIdentity): TaskIdentity {
  const long = Object.entries(task).filter(([, value]) => typeof value === "string" && value.length > MAX_TASK_TEXT);
  if (long.length === 0) return task;
  const bounded: Record<string, unknown> = { ...task };
  for (const [key, value] of long) bounded[key] = `${(value as string).slice(0, MAX_TASK_TEXT - 1)}…`;
  return bounded as unknown as TaskIdentity;
}

/**
 * Everything known about one run, merged from three sources in a fixed order of trust:
 * the live registry (liveness, live state, values held in memory), the journal (the durable truth
 * about start and end), and the record (a cache that also carries what the journal does not:
 * children and usage while the run is going). A settled outcome found in any of them is kept even
 * when another source is missing or unreadable.
 */
export interface RunFacts {
  runId: string;
  kind: RunKind;
  task: TaskIdentity;
  background: boolean;
  startedAt: string;
  live: boolean;
  status: RunStatus;
  outcome: RunOutcome | null;
  error?: RunError;
  endedAt?: string;
  children?: ChildCounts;
  usage?: Usage;
  changes?: ChangeStats;
  integrity: Integrity;
  final: FinalSource | null;
  diagnosticsBytes: number;
  /**
   * What the run's owner says it wrote to its logs (its entry here, or its record): a log it never
   * wrote to has no file, and reads empty rather than lost. Undefined when only the journal is left.
   */
  logBytesWritten?: { output: number; diagnostics: number };
}

/** A final value in hand (memory, or read from the terminal line), or in its final file. */
export type FinalSource = { where: "value"; final: MemoryFinal } | { where: "file"; path: string; meta: FinalMeta };

export interface FactsContext {
  scope: RunScope;
  scopeToken: string;
  registry: RunRegistry;
}

export const unavailable = (runId: string): FlowError =>
  new FlowError(
    "run_unavailable",
    `Run ${runId} is not available in this session and project (unknown, another session's, or pruned).`,
  );

/**
 * What the owner of a run knows of its evidence the moment it settles it: the journal whole, as it
 * stamped it after the terminal line, and the bytes it wrote to the diagnostics log. The view that
 * settling returns is then built from memory, reading no file.
 */
export interface SettledByOwner {
  integrity: "complete";
  diagnosticsBytes: number;
}

export function resolveFacts(ctx: FactsContext, runId: string, owner?: SettledByOwner): RunFacts {
  const candidate = ctx.registry.get(runId);
  const entry = candidate && candidate.scope === ctx.scopeToken ? candidate : undefined;
  const files = runFiles(ctx.scope, runId);
  const live = entry !== undefined && entry.status !== "settled";
  // A live run is read from memory alone (below): its folder is not looked at.
  const dirExists = !live && (owner !== undefined || (statOrNull(files.dir)?.isDirectory() ?? false));
  // No directory and nothing in memory: unknown, or pruned (pruning also forgets the run in memory).
  // A run still in memory whose evidence was lost keeps its settled result: evidence never discards it.
  if (!dirExists && !entry) throw unavailable(runId);

  // A live run's owner keeps its entry and its record in step, and a run settled in this process
  // has its terminal state in the entry: the entry says everything the record would, so such views
  // (a widget refreshing every second, the view settle returns) read no record.
  const record = dirExists && !live && !entry?.terminal ? readRecord(files.record, runId) : null;
  // Settled records vouch for their journal by stamp; anything else is classified (and memoised) by stamp.
  const cached = record?.status === "done" ? record.journal : entry?.journal;
  const report: JournalReport | null =
    live || !dirExists ? null : owner ? { integrity: owner.integrity, lines: 0, unreadable: false } : journalReport(files.journal, runId, cached);
  const start = report?.start;
  if (!entry && !record && !start) throw unavailable(runId); // nothing readable says what this run is

  const kind: RunKind = entry?.kind ?? record?.kind ?? start?.kind ?? runKindOf(runId);
  const task = entry?.task ?? boundedTask(record?.task ?? start?.task ?? { description: "" });
  const background = entry?.background ?? record?.background ?? start?.background ?? false;
  const startedAt = entry?.startedAt ?? record?.startedAt ?? start?.at ?? new Date(0).toISOString();

  const facts: RunFacts = {
    runId,
    kind,
    task,
    background,
    startedAt,
    live,
    status: "interrupted_or_uncertain",
    outcome: null,
    integrity: live ? "incomplete" : (report?.integrity ?? "unknown"),
    final: null,
    diagnosticsBytes: 0,
  };
  const written = entry ?? record;
  if (written) facts.logBytesWritten = { output: written.outputBytes, diagnostics: written.diagnosticsBytes };
  const children = entry?.children ?? record?.children;
  const usage = entry?.usage ?? record?.usage;
  if (children) facts.children = children;
  if (usage) facts.usage = usage;
  const changes = entry?.changes ?? record?.changes ?? report?.terminal?.changes;
  if (changes) facts.changes = changes;

  if (live && entry) {
    facts.status = entry.status === "queued" ? "queued" : "running";
    facts.diagnosticsBytes = entry.diagnosticsBytes;
    return facts;
  }

  // Terminal: memory first (it is what the owner decided), then the record, then the journal.
  const settled = entry?.terminal;
  const terminal = report?.terminal;
  let finalMeta: FinalMeta | undefined;
  if (settled) {
    facts.outcome = settled.outcome;
    if (settled.error) facts.error = settled.error;
    facts.endedAt = settled.endedAt;
    finalMeta = entry?.finalMeta ?? record?.final ?? terminal?.final;
  } else if (record?.status === "done" && record.outcome) {
    facts.outcome = record.outcome;
    if (record.error) facts.error = record.error;
    if (record.endedAt) facts.endedAt = record.endedAt;
    finalMeta = record.final;
  } else if (terminal) {
    facts.outcome = terminal.outcome;
    if (terminal.error) facts.error = terminal.error;
    facts.endedAt = terminal.endedAt;
    if (terminal.children) facts.children = terminal.children;
    if (terminal.usage) facts.usage = terminal.usage;
    finalMeta = terminal.final;
  }
  if (facts.outcome) facts.status = "done";

  if (facts.outcome === "succeeded") {
    if (entry?.final) facts.final = { where: "value", final: entry.final };
    else if (finalMeta?.inJournal) {
      facts.final = record && "finalValue" in record ? valueFinal(record.finalValue, finalMeta) : journalFinal(files.journal, runId, finalMeta);
    }
    else if (finalMeta?.saved && (owner !== undefined || lstatOrNull(files.final)?.isFile()))
      facts.final = { where: "file", path: files.final, meta: finalMeta };
  }
  facts.diagnosticsBytes = owner ? owner.diagnosticsBytes : dirExists ? regularFileBytes(files.diagnostics) : (entry?.diagnosticsBytes ?? 0);
  return facts;
}

/** The size of a run's evidence file as its readers see it: 0 for anything but a regular file (a planted link reads as missing). */
function regularFileBytes(path: string): number {
  const stats = lstatOrNull(path);
  return stats?.isFile() ? stats.size : 0;
}

const valueFinal = (value: unknown, meta: FinalMeta): FinalSource => ({
  where: "value",
  final: { value, format: meta.format, redacted: meta.redacted, saved: true },
});

/** A small final value, from the terminal line that carries it; null when that line cannot be read. */
function journalFinal(journal: string, runId: string, meta: FinalMeta): FinalSource | null {
  const terminal = readTerminalLine(journal, runId);
  return terminal && "finalValue" in terminal ? valueFinal(terminal.finalValue, meta) : null;
}
