import { hostname } from "node:os";
import { rmSync } from "node:fs";
import { FlowError } from "../contract/errors.ts";
import type { RunView } from "../contract/run-schema.ts";
import { INLINE_LIMIT_BYTES, jsonBytes } from "./delivery.ts";
import { diagnosticChunk, finalDocumentText, finalFormatFor, outputChunk, type DiagnosticEntry } from "./evidence.ts";
import { resolveFacts, type FactsContext } from "./facts.ts";
import { AppendFile, atomicWriteFile, ensureDir, errorCode, groupCommit } from "./fsio.ts";
import { runFiles, runsDir, type RunFiles } from "./home.ts";
import { newRunId, type RunKind } from "./ids.ts";
import { stampOf, type JournalStamp } from "./journal-cache.ts";
import {
  JOURNAL_VERSION,
  encodeLine,
  type BodyLine,
  type ChildCounts,
  type FinalMeta,
  type JournalLine,
  type RunError,
  type TaskIdentity,
  type Usage,
} from "./journal.ts";
import { RECORD_VERSION, writeRecord, type RunRecord } from "./record.ts";
import { createRunDirectory } from "./run-index.ts";
import { redactText, redactValue } from "./redact.ts";
import type { LiveEntry, MemoryFinal } from "./registry.ts";
import { buildView, outputWarnings } from "./view.ts";
import { capText } from "../../runtime/index.ts";
import type { CreateRunInput, SettleInput, SettleResult, WriterHooks } from "./writer-types.ts";

export type { CreateRunInput, SettleInput, SettleResult, WritePoint, WriterHooks } from "./writer-types.ts";

export interface WriterContext extends FactsContext {
  hooks: WriterHooks;
}

/** An error message in a receipt, record or journal: enough to act on, never megabytes. */
const MAX_ERROR_CHARS = 8192;
/** One diagnostics entry (a mapped stack, a child's error report). */
const MAX_DIAGNOSTIC_CHARS = 32_768;

/** fs errors name their path; reports carry the code only, so no private path leaks into a receipt. */
const describeError = (error: unknown): string => errorCode(error) ?? (error instanceof Error ? error.name : "error");

/**
 * The owner's handle on one run. Writes are synchronous so their order on disk is the order of the
 * calls, and each is whole on disk before the next step depends on it: a process that dies (even
 * by SIGKILL) loses nothing it reported written. Power-loss durability (fsync) is off the critical
 * path: the start line, the final value, the terminal line, the logs and the settled record are
 * queued to the process's group commit (fsio.ts), which flushes many runs at once in the documented
 * order. `flush()` still fsyncs at once for a caller that asks. An evidence write that fails after
 * creation never fails the run: the run goes on in memory and the failure is reported at settle.
 */
export class RunWriter {
  readonly runId: string;
  readonly kind: RunKind;
  private readonly ctx: WriterContext;
  private readonly files: RunFiles;
  private readonly entry: LiveEntry;
  private readonly journalFile: AppendFile;
  private output: AppendFile | null = null;
  private diagnostics: AppendFile | null = null;
  private seq = 1;
  private journalBroken = false;
  private readonly errors: string[] = [];
  private record: RunRecord;
  /** A coalesced record update is waiting (see setUsage). */
  private recordDirty = false;

  private constructor(ctx: WriterContext, files: RunFiles, entry: LiveEntry, journal: AppendFile, record: RunRecord) {
    this.ctx = ctx;
    this.files = files;
    this.entry = entry;
    this.runId = entry.runId;
    this.kind = entry.kind;
    this.journalFile = journal;
    this.record = record;
  }

  /** Create the run's evidence, then register it. Fails with `storage_unavailable` before registering. */
  static create(ctx: WriterContext, input: CreateRunInput): RunWriter {
    const runId = newRunId(input.kind);
    const files = runFiles(ctx.scope, runId);
    const task = redactValue(input.task).value as TaskIdentity;
    const startedAt = new Date().toISOString();
    let journal: AppendFile;
    try {
      createRunDirectory(runsDir(ctx.scope), runId, () => ensureDir(files.dir));
      journal = new AppendFile(files.journal);
      const start: JournalLine = {
        v: JOURNAL_VERSION,
        seq: 0,
        runId,
        at: startedAt,
        t: "start",
        kind: input.kind,
        task,
        background: input.background,
      };
      journal.append(encodeLine(start), false);
      groupCommit().enqueue("journal", files.journal);
      atomicWriteFile(files.launch, `${JSON.stringify(redactValue(input.launch ?? {}).value, null, 2)}\n`, { durable: false });
    } catch (error) {
      try {
        rmSync(files.dir, { recursive: true, force: true }); // leave no half-created run behind
      } catch {
        /* nothing was created */
      }
      throw new FlowError("storage_unavailable", `Could not write the run's journal: ${describeError(error)}`);
    }
    const record: RunRecord = {
      v: RECORD_VERSION,
      runId,
      kind: input.kind,
      task,
      background: input.background,
      status: input.status ?? "running",
      outcome: null,
      startedAt,
      outputBytes: 0,
      diagnosticsBytes: 0,
      owner: { pid: process.pid, host: hostname() },
      updatedAt: startedAt,
    };
    const entry = ctx.registry.register({
      runId,
      kind: input.kind,
      scope: ctx.scopeToken,
      task,
      background: input.background,
      startedAt,
      status: input.status ?? "running",
    });
    const writer = new RunWriter(ctx, files, entry, journal, record);
    writer.saveRecord(false);
    ctx.hooks.at?.("created", runId);
    return writer;
  }

  get settled(): boolean {
    return this.entry.status === "settled";
  }

  /** Whether an operator asked to cancel; the owner decides how to stop and then settles `cancelled`. */
  get cancelRequested(): boolean {
    return this.ctx.registry.cancelRequested(this.runId);
  }

  /** Register the stop hook `external_runs cancel` calls. */
  onCancel(abort: (reason: string) => void): void {
    this.ctx.registry.onCancel(this.runId, abort);
  }

  markRunning(): void {
    this.assertOpen();
    if (this.entry.status !== "queued") return;
    this.entry.status = "running";
    this.record.status = "running";
    this.saveRecord(false);
  }

  /** One whole message (redaction sees the message whole, so pass messages, not stream fragments). */
  appendOutput(text: string): { redacted: boolean } {
    this.assertOpen();
    const { text: clean, changed } = redactText(text);
    this.output ??= this.openLog(this.files.output);
    if (this.output) {
      const chunk = outputChunk(this.kind, clean, new Date().toISOString(), this.output.size === 0);
      this.tryWrite("output", () => this.output?.append(chunk, false));
      this.entry.outputBytes = this.output.size;
    }
    return { redacted: changed };
  }

  appendDiagnostic(entry: DiagnosticEntry): void {
    this.assertOpen();
    const clean = { ...entry, message: capText(redactText(entry.message).text, MAX_DIAGNOSTIC_CHARS), at: entry.at ?? new Date().toISOString() };
    this.diagnostics ??= this.openLog(this.files.diagnostics);
    if (this.diagnostics) {
      const chunk = diagnosticChunk(this.kind, clean, this.diagnostics.size === 0);
      this.tryWrite("diagnostics", () => this.diagnostics?.append(chunk, false));
      this.entry.diagnosticsBytes = this.diagnostics.size;
    }
  }

  /** A child, store or event line. Values are redacted before they are written. */
  journal(line: BodyLine): void {
    this.assertOpen();
    const clean = redactValue(line).value as BodyLine;
    this.appendJournal(
      { ...clean, v: JOURNAL_VERSION, seq: this.seq, runId: this.runId, at: new Date().toISOString() } as JournalLine,
      false,
    );
  }

  setChildren(children: ChildCounts): void {
    this.assertOpen();
    this.entry.children = { ...children };
    this.record.children = { ...children };
    this.saveRecord(false);
  }

  /**
   * Usage changes with every child that ends; its record rewrite is coalesced (written with the
   * next record write, or on the next turn of the event loop): a killed run's usage may lag by
   * what arrived in its last turn, while child counts (setChildren) are on disk at once.
   */
  setUsage(usage: Usage): void {
    this.assertOpen();
    this.entry.usage = { ...usage };
    this.record.usage = { ...usage };
    if (this.recordDirty) return;
    this.recordDirty = true;
    setImmediate(() => {
      if (this.recordDirty && !this.settled) this.saveRecord(false);
    });
  }

  /** Flush appended evidence now (a workflow may want its store lines on disk before a risky step). */
  flush(): void {
    this.tryWrite("flush", () => {
      this.journalFile.flush();
      this.output?.flush();
      this.diagnostics?.flush();
    });
  }

  /**
   * End the run. Order matters for crashes: the final value is written and flushed first, then the
   * terminal line, then the record. A reader that finds a terminal line trusts it even without the
   * record; a final file without a terminal line is ignored.
   */
  settle(input: SettleInput): SettleResult {
    this.assertOpen();
    const endedAt = new Date().toISOString();
    if (input.usage) this.entry.usage = { ...input.usage };
    if (input.children) this.entry.children = { ...input.children };
    const error = input.error ? { code: input.error.code, message: capText(redactText(input.error.message).text, MAX_ERROR_CHARS) } : undefined;

    let memory: MemoryFinal | undefined;
    let meta: FinalMeta | undefined;
    if (input.outcome === "succeeded" && input.value !== undefined) {
      const { value, changed } = redactValue(input.value);
      if (value !== undefined) {
        const format = finalFormatFor(this.kind, value, input.structured ?? false);
        const doc = finalDocumentText(format, value);
        memory = { value, format, redacted: changed, saved: false };
        meta = {
          format,
          valueJsonBytes: jsonBytes(value) ?? 0,
          documentBytes: Buffer.byteLength(doc, "utf8"),
          redacted: changed,
          saved: false,
        };
        const saved = this.tryWrite("final", () => atomicWriteFile(this.files.final, doc, { durable: false }));
        if (saved) {
          groupCommit().enqueue("final", this.files.final);
          groupCommit().enqueue("final", this.files.dir); // the rename that placed it
        }
        meta.saved = saved;
        if (saved) this.ctx.hooks.at?.("final-written", this.runId);
        // Memory keeps what only memory can serve: an unsaved value, or one small enough to go inline.
        memory.saved = saved;
        if (saved && meta.valueJsonBytes > INLINE_LIMIT_BYTES) memory = undefined;
      }
    }

    const terminal: JournalLine = {
      v: JOURNAL_VERSION,
      seq: this.seq,
      runId: this.runId,
      at: endedAt,
      t: "terminal",
      outcome: input.outcome,
      endedAt,
    };
    if (error) terminal.error = error;
    if (this.entry.children) terminal.children = this.entry.children;
    if (this.entry.usage) terminal.usage = this.entry.usage;
    if (meta) terminal.final = meta;
    this.appendJournal(terminal, false);
    for (const file of [this.journalFile, this.output, this.diagnostics]) if (file) groupCommit().enqueue("journal", file.path);
    this.ctx.hooks.at?.("terminal-written", this.runId);

    Object.assign(this.record, { status: "done", outcome: input.outcome, endedAt });
    if (error) this.record.error = error;
    if (meta) this.record.final = meta;
    if (this.entry.children) this.record.children = this.entry.children;
    if (this.entry.usage) this.record.usage = this.entry.usage;
    // Cache the journal's integrity only when every journal write went through. The stamp is taken
    // after the terminal line, the journal's last write, so any later change to it is a miss.
    if (!this.journalBroken) {
      const stamp = this.tryStat();
      if (stamp) this.record.journal = { ...stamp, integrity: "complete" };
    }
    if (this.saveRecord(false, () => this.ctx.hooks.at?.("record-before-rename", this.runId))) {
      groupCommit().enqueue("record", this.files.record);
      groupCommit().enqueue("record", this.files.dir);
    }
    this.close();

    const view = this.ctx.registry.settle(
      this.runId,
      error ? { outcome: input.outcome, error, endedAt } : { outcome: input.outcome, endedAt },
      memory,
      () => buildView(resolveFacts(this.ctx, this.runId)),
    );
    this.ctx.hooks.at?.("settled", this.runId);
    const warnings = outputWarnings([view]);
    // The result stands, but part of its evidence was not saved: say so on the receipt.
    if (this.errors.length > 0) warnings.push("evidence_incomplete");
    return { view, warnings, evidenceErrors: [...this.errors] };
  }

  /** The run as supervision sees it now. */
  view(): RunView {
    return buildView(resolveFacts(this.ctx, this.runId));
  }

  private appendJournal(line: JournalLine, flush: boolean): void {
    if (this.journalBroken) return; // after a failed append the tail may be torn; more lines would read as damage
    const ok = this.tryWrite("journal", () => this.journalFile.append(encodeLine(line), flush));
    if (ok) this.seq++;
    else this.journalBroken = true;
  }

  private tryStat(): JournalStamp | null {
    try {
      return stampOf(this.journalFile.stat());
    } catch {
      return null; // no cache: readers classify the journal themselves
    }
  }

  private openLog(path: string): AppendFile | null {
    try {
      return new AppendFile(path);
    } catch (error) {
      this.errors.push(`open ${path === this.files.output ? "output" : "diagnostics"}: ${describeError(error)}`);
      return null;
    }
  }

  private saveRecord(durable: boolean, beforeRename?: () => void): boolean {
    this.recordDirty = false;
    this.record.updatedAt = new Date().toISOString();
    this.record.outputBytes = this.output?.size ?? this.record.outputBytes;
    this.record.diagnosticsBytes = this.diagnostics?.size ?? this.record.diagnosticsBytes;
    return this.tryWrite("record", () =>
      writeRecord(this.files.record, this.record, beforeRename ? { durable, beforeRename } : { durable }),
    );
  }

  private tryWrite(what: string, write: () => void): boolean {
    try {
      write();
      return true;
    } catch (error) {
      this.errors.push(`${what}: ${describeError(error)}`);
      return false;
    }
  }

  private assertOpen(): void {
    if (this.entry.status === "settled") throw new Error(`run ${this.runId} is already settled`);
  }

  private close(): void {
    for (const file of [this.journalFile, this.output, this.diagnostics]) {
      try {
        file?.close();
      } catch {
        /* closing is best effort */
      }
    }
  }
}
