import { AppendFile, errorCode } from "../fsio.ts";
import { groupCommit } from "./group-commit.ts";
import type { RunFiles } from "../home.ts";
import { stampOf, type JournalStamp } from "../journal/journal-cache.ts";
import { encodeLine, type JournalLine } from "../journal/journal.ts";

/** fs errors name their path; reports carry the code only, so no private path leaks into a receipt. */
export const describeError = (error: unknown): string =>
  errorCode(error) ?? (error instanceof Error ? error.name : "error");

/**
 * The files of one run as its owner writes them: the journal (open from creation), the output and
 * diagnostics logs (opened on their first write, so a run that writes none has none), and the
 * record (rewritten by the group commit).
 * Appends are synchronous, so their order on disk is the order of the calls and each is whole on
 * disk before the owner goes on: a process that dies, even by SIGKILL, loses no line it wrote. A
 * write that fails is kept in `errors` and never throws: the run goes on in memory.
 */
export class RunFilesWriter {
  readonly files: RunFiles;
  readonly errors: string[] = [];
  private readonly journalFile: AppendFile;
  private output: AppendFile | null = null;
  private diagnostics: AppendFile | null = null;
  private journalBroken = false;

  constructor(files: RunFiles, journal: AppendFile) {
    this.files = files;
    this.journalFile = journal;
  }

  get outputBytes(): number {
    return this.output?.size ?? 0;
  }

  get diagnosticsBytes(): number {
    return this.diagnostics?.size ?? 0;
  }

  /** Whether every journal line went through (a failed append may leave a torn tail). */
  get journalWhole(): boolean {
    return !this.journalBroken;
  }

  /** Append one journal line; false if it was not written (then no later line is either). */
  appendJournal(line: JournalLine): boolean {
    return this.appendJournalText(encodeLine(line));
  }

  /** Append one journal line already encoded (one JSON object and its newline); false as appendJournal. */
  appendJournalText(text: string): boolean {
    if (this.journalBroken) return false; // after a failed append the tail may be torn; more lines would read as damage
    const ok = this.tryWrite("journal", () => this.journalFile.append(text, false));
    if (!ok) this.journalBroken = true;
    return ok;
  }

  /** Append to the output log; `chunk` gets whether the log is still empty. */
  appendOutput(chunk: (first: boolean) => string): void {
    this.output ??= this.openLog(this.files.output, "output");
    const log = this.output;
    if (log) this.tryWrite("output", () => log.append(chunk(log.size === 0), false));
  }

  /** Append to the diagnostics log; `chunk` gets whether the log is still empty. */
  appendDiagnostic(chunk: (first: boolean) => string): void {
    this.diagnostics ??= this.openLog(this.files.diagnostics, "diagnostics");
    const log = this.diagnostics;
    if (log) this.tryWrite("diagnostics", () => log.append(chunk(log.size === 0), false));
  }

  /** fsync the journal and logs now. */
  flush(): void {
    this.tryWrite("flush", () => {
      this.journalFile.flush();
      this.output?.flush();
      this.diagnostics?.flush();
    });
  }


  /**
   * The journal's stamp after its last write, or null when it cannot be taken. A journal that is no
   * longer linked (the run's folder was deleted under its owner) took its writes nowhere: that is
   * an evidence error, reported like a failed write.
   */
  closingStamp(): JournalStamp | null {
    try {
      const stats = this.journalFile.stat();
      if (stats.nlink === 0n) {
        this.errors.push("journal: ENOENT");
        return null;
      }
      return stampOf(stats);
    } catch {
      return null; // no cache: readers classify the journal themselves
    }
  }

  /**
   * Rewrite the record in the group commit's next batch, with what `render` says then: changes in
   * one turn cost one rewrite, done off the main thread. The record is a cache of the journal, so a
   * rewrite lost to a crash or a power loss loses nothing (readers rebuild the run from its journal).
   */
  saveRecord(render: () => string, beforeRename?: () => void): void {
    groupCommit().rewrite(this.files.record, beforeRename ? { render, beforeRename } : { render });
  }

  /** Run a write, keeping its failure in `errors`; true when it went through. */
  tryWrite(what: string, write: () => void): boolean {
    try {
      write();
      return true;
    } catch (error) {
      // Each kind of failure once: a full disk fails every later write the same way.
      const failure = `${what}: ${describeError(error)}`;
      if (!this.errors.includes(failure)) this.errors.push(failure);
      return false;
    }
  }

  /**
   * Done writing: the journal and logs go to the group commit open, to be fsynced (power-loss
   * durability, off the critical path) and closed there, with the run's folder, whose entries name them.
   */
  close(): void {
    for (const file of [this.journalFile, this.output, this.diagnostics]) {
      const fd = file?.release() ?? null;
      if (file && fd !== null) groupCommit().handOver("journal", file.path, fd);
    }
    groupCommit().enqueue("journal", this.files.dir);
  }

  private openLog(path: string, what: "output" | "diagnostics"): AppendFile | null {
    try {
      return new AppendFile(path, { fresh: true }); // in the run's own new folder
    } catch (error) {
      this.errors.push(`open ${what}: ${describeError(error)}`);
      return null;
    }
  }
}
