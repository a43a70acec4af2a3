import { hostname } from "node:os";
import type { RunView } from "../../contract/run-schema.ts";
import { diagnosticChunk, outputChunk, type DiagnosticEntry } from "../journal/evidence.ts";
import { resolveFacts, type FactsContext } from "../read/facts.ts";
import { settleFinal } from "./final-value.ts";
import { writeNewFile } from "../fsio.ts";
import { ownIdentity } from "../process-identity.ts";
import { groupCommit } from "./group-commit.ts";
import type { RunKind } from "../ids.ts";
import { JOURNAL_VERSION, type BodyLine, type ChildCounts, type JournalLine, type Usage } from "../journal/journal.ts";
import { RECORD_VERSION, type RunRecord } from "../journal/record.ts";
import { stripControls } from "../controls.ts";
import { continueKeyBlock, redactedJson, redactText } from "../redact/index.ts";
import type { LiveEntry } from "../registry.ts";
import { correlated, createRunEvidence } from "./run-creation.ts";
import type { RunFilesWriter } from "./run-files-writer.ts";
import { buildView, outputWarnings } from "../read/view.ts";
import { capText } from "../../../runtime/index.ts";
import type { CreateRunInput, SettleInput, SettleResult, WriterHooks } from "./writer-types.ts";

export type { CreateRunInput, SettleInput, SettleResult, WritePoint, WriterHooks } from "./writer-types.ts";

export interface WriterContext extends FactsContext {
  hooks: WriterHooks;
}

/** An error message in a receipt, record or journal: enough to act on, never megabytes. */
const MAX_ERROR_CHARS = 8192;
/** One diagnostics entry (a mapped stack, a child's error report). */
const MAX_DIAGNOSTIC_CHARS = 32_768;

/**
 * The host name a record's owner carries, asked of the system at most once a second: every run of
 * a fan-out names it, and each ask is a system call. Readers compare it with the name they ask for
 * themselves, so a host renamed mid-session is named anew from the next second on.
 */
const HOST_NAME_TTL_MS = 1000;
let processHost: { name: string; askedAt: number } | undefined;
function hostName(): string {
  const now = Date.now();
  if (processHost === undefined || now - processHost.askedAt > HOST_NAME_TTL_MS) processHost = { name: hostname(), askedAt: now };
  return processHost.name;
}

/**
 * The owner's handle on one run: its live state (registry entry and record) and its evidence
 * (run-files-writer.ts). Journal lines, logs and the final value are written synchronously, so a
 * process that dies (even by SIGKILL) loses nothing it reported written. The record, a cache of
 * the journal, is rewritten by the group commit once per batch however often it changes, and
 * power-loss durability (fsync) is queued there too (group-commit.ts). `flush()` fsyncs at once for
 * a caller that asks. An evidence write that fails after creation never fails the run: the run
 * goes on in memory and the failure is reported at settle.
 */
export class RunWriter {
  readonly runId: string;
  readonly kind: RunKind;
  private readonly ctx: WriterContext;
  private readonly out: RunFilesWriter;
  private readonly entry: LiveEntry;
  private seq = 1;
  private readonly record: RunRecord;
  /** The output so far opened a private key block and did not end it: what follows is the key's. */
  private outputInKeyBlock = false;

  private constructor(ctx: WriterContext, out: RunFilesWriter, entry: LiveEntry, record: RunRecord) {
    this.ctx = ctx;
    this.out = out;
    this.entry = entry;
    this.runId = entry.runId;
    this.kind = entry.kind;
    this.record = record;
  }

  /** Create the run's evidence, then register it. Fails with `storage_unavailable` before registering. */
  static create(ctx: WriterContext, input: CreateRunInput): RunWriter {
    const { runId, task, startedAt, writer: out } = createRunEvidence(ctx.scope, correlated(input, (id) => ctx.registry.get(id)?.task.correlationId));
    const status = input.status ?? "running";
    const record: RunRecord = {
      v: RECORD_VERSION,
      runId,
      kind: input.kind,
      task,
      background: input.background,
      status,
      outcome: null,
      startedAt,
      outputBytes: 0,
      diagnosticsBytes: 0,
      owner: { pid: process.pid, host: hostName(), ...ownIdentity() },
      updatedAt: startedAt,
    };
    const entry = ctx.registry.register({ runId, kind: input.kind, scope: ctx.scopeToken, task, background: input.background, startedAt, status });
    const writer = new RunWriter(ctx, out, entry, record);
    writer.saveRecord();
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
    this.moveStatus("queued", "running");
  }

  /** Back to `queued`: a fleet worker that took the child gave it back to the queue (docs/scale.md). */
  markQueued(): void {
    this.moveStatus("running", "queued");
  }

  /** A live run's one move between queued and running, recorded; from any other status, none. */
  private moveStatus(from: "queued" | "running", to: "queued" | "running"): void {
    this.assertOpen();
    if (this.entry.status !== from) return;
    this.entry.status = to;
    this.record.status = to;
    this.saveRecord();
  }

  /**
   * One whole message (redaction sees the message whole, so pass messages, not stream fragments);
   * returns it as written. A private key printed line by line is still redacted whole: the lines
   * after one that opens a key block are the key's until its end line (see continueKeyBlock).
   */
  appendOutput(text: string): { redacted: boolean; text: string } {
    this.assertOpen();
    const { text: clean, open } = continueKeyBlock(text, this.outputInKeyBlock);
    this.outputInKeyBlock = open;
    const changed = clean !== text;
    const at = new Date().toISOString();
    this.out.appendOutput((first) => outputChunk(this.kind, clean, at, first));
    this.entry.outputBytes = this.out.outputBytes;
    return { redacted: changed, text: clean };
  }

  appendDiagnostic(entry: DiagnosticEntry): void {
    this.assertOpen();
    const clean = {
      ...entry,
      // A code may come from a script or a tool's answer, not only from pi-flow: cleaned like the message.
      ...(entry.code !== undefined ? { code: capText(stripControls(redactText(entry.code).text), 200) } : {}),
      message: capText(stripControls(redactText(entry.message).text), MAX_DIAGNOSTIC_CHARS),
      at: entry.at ?? new Date().toISOString(),
    };
    this.out.appendDiagnostic((first) => diagnosticChunk(this.kind, clean, first));
    this.entry.diagnosticsBytes = this.out.diagnosticsBytes;
  }

  /** A child, store or event line. Values are redacted before they are written. */
  journal(line: BodyLine): void {
    this.assertOpen();
    // Serialised once: the redacted body's JSON, then the fields every line carries, as a spread would place them.
    const body = redactedJson(line)!;
    const base = JSON.stringify({ v: JOURNAL_VERSION, seq: this.seq, runId: this.runId, at: new Date().toISOString() });
    if (this.out.appendJournalText(`${body.slice(0, -1)},${base.slice(1)}\n`)) this.seq++;
  }

  /**
   * Child counts and usage change with every child that starts or ends; the record carries them
   * and is rewritten once per group-commit batch with the latest counts. A killed run's counts may
   * lag by what changed since that batch; its journal has a line per child.
   */
  setChildren(children: ChildCounts): void {
    this.assertOpen();
    this.entry.children = { ...children };
    this.record.children = { ...children };
    this.saveRecord();
  }

  setUsage(usage: Usage): void {
    this.assertOpen();
    this.entry.usage = { ...usage };
    this.record.usage = { ...usage };
    this.saveRecord();
  }

  /** Flush appended evidence now (a workflow may want its store lines on disk before a risky step). */
  flush(): void {
    this.out.flush();
  }

  /**
   * End the run. Order matters for crashes: a large final value is written to its file first, then
   * the terminal line (which carries a small value itself), then the record. A reader that finds a
   * terminal line trusts it even without the record; a final file without a terminal line is ignored.
   */
  settle(input: SettleInput): SettleResult {
    this.assertOpen();
    const endedAt = new Date().toISOString();
    if (input.usage) this.entry.usage = { ...input.usage };
    if (input.children) this.entry.children = { ...input.children };
    // An error is printed as it is (flow's error line, a receipt): no escape sequence may survive in it.
    const error = input.error ? { code: input.error.code, message: capText(stripControls(redactText(input.error.message).text), MAX_ERROR_CHARS) } : undefined;

    const final =
      input.outcome === "succeeded" && input.value !== undefined
        ? settleFinal(this.kind, input.value, input.structured ?? false, (document) => this.saveFinal(document))
        : undefined;

    const terminal: JournalLine = { v: JOURNAL_VERSION, seq: this.seq, runId: this.runId, at: endedAt, t: "terminal", outcome: input.outcome, endedAt };
    if (error) terminal.error = error;
    if (this.entry.children) terminal.children = this.entry.children;
    if (this.entry.usage) terminal.usage = this.entry.usage;
    if (input.changes) terminal.changes = this.entry.changes = this.record.changes = input.changes;
    if (final) terminal.final = final.meta;
    if (final && "journalValue" in final) terminal.finalValue = final.journalValue;
    this.appendJournal(terminal);
    this.ctx.hooks.at?.("terminal-written", this.runId);

    Object.assign(this.record, { status: "done", outcome: input.outcome, endedAt });
    if (error) this.record.error = error;
    if (final) this.record.final = this.entry.finalMeta = final.meta;
    if (final && "journalValue" in final) this.record.finalValue = final.journalValue;
    if (this.entry.children) this.record.children = this.entry.children;
    if (this.entry.usage) this.record.usage = this.entry.usage;
    // Cache the journal's integrity only when every journal write went through. The stamp is taken
    // after the terminal line, the journal's last write, so any later change to it is a miss.
    const stamp = this.out.journalWhole ? this.out.closingStamp() : null;
    if (stamp) this.record.journal = this.entry.journal = { ...stamp, integrity: "complete" };
    // A value that travels in the terminal line is on disk only if that line landed: otherwise it
    // exists only in memory, and memory keeps it for the life of the process (registry.ts).
    if (final?.memory && final.meta.inJournal && !stamp) final.memory.saved = false;
    this.saveRecord(true);
    this.out.close();

    const view = this.ctx.registry.settle(
      this.runId,
      error ? { outcome: input.outcome, error, endedAt } : { outcome: input.outcome, endedAt },
      final?.memory,
      // With the journal stamped whole, the owner knows everything the view would read from disk.
      () => buildView(resolveFacts(this.ctx, this.runId, stamp ? { integrity: "complete", diagnosticsBytes: this.out.diagnosticsBytes } : undefined)),
    );
    this.ctx.hooks.at?.("settled", this.runId);
    const warnings = outputWarnings([view]);
    // The result stands, but part of its evidence was not saved: say so on the receipt.
    if (this.out.errors.length > 0) warnings.push("evidence_incomplete");
    return { view, warnings, evidenceErrors: [...this.out.errors], ...(final ? { value: final.value } : {}) };
  }

  /**
   * `settle` (or the lifecycle around it) threw partway: a write, a hook, building the view. End the
   * run in this process anyway, failed with `message`, so no wait hangs on it and nothing lists it
   * live. What was written stays; memory's outcome is what this process answers. Never throws.
   */
  settleUnwritten(message: string): SettleResult {
    const error = { code: "failed", message: capText(stripControls(redactText(message).text), MAX_ERROR_CHARS) };
    if (this.settled) return { view: this.entry.view ?? this.view(), warnings: ["evidence_incomplete"], evidenceErrors: [error.message] };
    try {
      this.out.close(); // the journal and logs are handed to the group commit, as settle would
    } catch (closeError) {
      this.out.errors.push(`close: ${closeError instanceof Error ? closeError.message : String(closeError)}`);
    }
    const present = (): RunView => {
      try {
        return buildView(resolveFacts(this.ctx, this.runId));
      } catch {
        // The folder cannot be read either: the view comes from memory alone.
        return buildView(resolveFacts(this.ctx, this.runId, { integrity: "complete", diagnosticsBytes: this.out.diagnosticsBytes }));
      }
    };
    const view = this.ctx.registry.settle(this.runId, { outcome: "failed", error, endedAt: new Date().toISOString() }, undefined, present);
    return { view, warnings: ["evidence_incomplete"], evidenceErrors: [...this.out.errors, error.message] };
  }

  /** The run as supervision sees it now. */
  view(): RunView {
    return buildView(resolveFacts(this.ctx, this.runId));
  }

  private saveFinal(document: string): boolean {
    const saved = this.out.tryWrite("final", () => writeNewFile(this.out.files.final, document));
    if (!saved) return false;
    groupCommit().enqueue("final", this.out.files.final);
    groupCommit().enqueue("final", this.out.files.dir); // the directory entry that placed it
    this.ctx.hooks.at?.("final-written", this.runId);
    return true;
  }

  private appendJournal(line: JournalLine): void {
    if (this.out.appendJournal(line)) this.seq++;
  }

  /** Queue a record rewrite; `settled` lets crash tests stop before its rename. */
  private saveRecord(settled = false): void {
    const render = () => {
      this.record.updatedAt = new Date().toISOString();
      this.record.outputBytes = this.out.outputBytes;
      this.record.diagnosticsBytes = this.out.diagnosticsBytes;
      return `${JSON.stringify(this.record)}\n`;
    };
    const beforeRename = settled ? () => this.ctx.hooks.at?.("record-before-rename", this.runId) : undefined;
    this.out.saveRecord(render, beforeRename);
  }

  private assertOpen(): void {
    if (this.entry.status === "settled") throw new Error(`run ${this.runId} is already settled`);
  }
}
