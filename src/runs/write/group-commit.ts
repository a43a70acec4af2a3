import { randomBytes } from "node:crypto";
import { close, fsync, open, rename, rm, write } from "node:fs";
import { dirname } from "node:path";
import { TMP_PREFIX } from "../fsio.ts";
import { processGlobal } from "../../../runtime/process-global.ts";

/**
 * Group commit: the run store's disk work that nothing waits for, taken off the critical path.
 *
 * Writers make what a crash must not lose visible at once with plain synchronous writes (those
 * survive the process dying, SIGKILL included) and hand two kinds of work to the process's group
 * commit:
 *
 * - paths that a power loss must not undo, to be fsynced;
 * - rewrites of a file that is only a cache (a run's record), coalesced per file: however often a
 *   run's record changes in a turn, it is rewritten once, with its latest content. A cache is never
 *   fsynced: one that a power loss leaves old, empty or missing is rebuilt from the journal.
 *
 * One batch at a time does both on libuv's thread pool, however many runs queued work: many runs
 * that start or settle together cost one batch, and the host's event loop is not
 * held up by file creation and renames. Batches run one after another, in phases that keep the
 * documented order across a power loss: final values (and the directory entries that placed them)
 * before journals and logs; records are rewritten after the fsyncs of their batch. A process
 * killed before a batch runs loses only cache rewrites: readers rebuild a run from its journal
 * when its record is missing or stale.
 *
 * The host's share of a batch is the callbacks of its file operations, so each path costs as few as
 * it can: a file its writer is done with is handed over open (fsync, close: no open).
 */
export type CommitPhase = "final" | "journal";
const PHASES: readonly CommitPhase[] = ["final", "journal"];

export interface Rewrite {
  /** The file's content as of now; called when the batch writes it, so the latest state wins. */
  render(): string;
  /** Test seam: called after the temp file is written, before it replaces the file. */
  beforeRename?: () => void;
}

/** A path to make durable: opened by the batch, or already open and handed over (the batch closes it). */
type SyncTarget = { fd: number } | null;

interface Batch {
  syncs: Map<CommitPhase, Map<string, SyncTarget>>;
  rewrites: Map<string, Rewrite>;
}

const emptyBatch = (): Batch => ({ syncs: new Map(PHASES.map((phase) => [phase, new Map()])), rewrites: new Map() });

export class GroupCommit {
  private queued = emptyBatch();
  private scheduled = false;
  private running = false;
  private current: Promise<void> = Promise.resolve();
  /** Batches, fsyncs and rewrites done so far (what the group saves is visible here). */
  readonly stats = { batches: 0, fsyncs: 0, rewrites: 0 };

  /** Queue `path` (a file or a directory) to be made durable in `phase` of the next batch. */
  enqueue(phase: CommitPhase, path: string): void {
    const syncs = this.queued.syncs.get(phase)!;
    if (!syncs.has(path)) syncs.set(path, null);
    this.schedule();
  }

  /**
   * Queue the open file `fd` (at `path`), which its writer is done with: the batch fsyncs it in
   * `phase` and closes it. The descriptor is the group commit's from now on.
   */
  handOver(phase: CommitPhase, path: string, fd: number): void {
    const syncs = this.queued.syncs.get(phase)!;
    const earlier = syncs.get(path);
    if (earlier) closeQuietly(earlier.fd); // a path handed over twice in a batch: one fsync is enough
    syncs.set(path, { fd });
    this.schedule();
  }

  /**
   * Rewrite the file at `path` atomically (a temp file renamed over it) in the next batch. A
   * rewrite queued again before the batch runs replaces the earlier one (one write per file per batch).
   */
  rewrite(path: string, rewrite: Rewrite): void {
    this.queued.rewrites.set(path, rewrite);
    this.schedule();
  }

  /** Resolves once everything queued before the call is written and durable (or could not be). */
  async idle(): Promise<void> {
    for (;;) {
      if (this.running) await this.current;
      else if (this.scheduled) await new Promise((resolve) => setImmediate(resolve));
      else return;
    }
  }

  /**
   * The next batch starts on the next turn, or, while one is being written, when that one ends:
   * then it holds everything queued meanwhile. On a slow disk batches grow instead of queueing
   * up, and a short run's start and end (its journal's fsync, its record) meet in one batch.
   */
  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const batch = this.queued;
      this.queued = emptyBatch();
      this.running = true;
      this.current = this.commit(batch).finally(() => {
        this.running = false;
        if (this.pending) this.schedule();
      });
    });
  }

  /** Whether anything is queued for the next batch. */
  private get pending(): boolean {
    return this.queued.rewrites.size > 0 || [...this.queued.syncs.values()].some((syncs) => syncs.size > 0);
  }

  private async commit(batch: Batch): Promise<void> {
    this.stats.batches++;
    for (const phase of PHASES) {
      const syncs = batch.syncs.get(phase)!;
      this.stats.fsyncs += syncs.size;
      await Promise.all(Array.from(syncs, ([path, target]) => (target ? syncAndClose(target.fd) : syncPath(path))));
    }
    this.stats.rewrites += batch.rewrites.size;
    await Promise.all(Array.from(batch.rewrites, ([path, rewrite]) => replaceFile(path, rewrite)));
  }
}

/** Write a sibling temp file, then rename it over `path`; a failure leaves the old file (it is a cache). */
async function replaceFile(path: string, rewrite: Rewrite): Promise<void> {
  const tmp = `${dirname(path)}/${TMP_PREFIX}${randomBytes(6).toString("hex")}`;
  try {
    await writeTemp(tmp, Buffer.from(rewrite.render(), "utf8"));
    rewrite.beforeRename?.();
    await new Promise<void>((resolve, reject) => rename(tmp, path, (error) => (error ? reject(error) : resolve())));
  } catch {
    // The run's directory was pruned or the disk refused: the record is a cache, readers use the journal.
    await new Promise<void>((resolve) => rm(tmp, { force: true }, () => resolve()));
  }
}

/** Create `tmp` exclusively and write `data` whole through one descriptor. */
function writeTemp(tmp: string, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    open(tmp, "wx", 0o600, (openError, fd) => {
      if (openError) return reject(openError);
      const finish = (error: Error | null) => close(fd, () => (error ? reject(error) : resolve()));
      const writeFrom = (offset: number) => {
        if (offset >= data.length) return finish(null);
        write(fd, data, offset, data.length - offset, null, (error, written) => (error ? finish(error) : writeFrom(offset + written)));
      };
      writeFrom(0);
    });
  });
}

/** Best effort: a file pruned meanwhile, or a platform that cannot open a directory, is fine. */
function syncPath(path: string): Promise<void> {
  return new Promise((resolve) => open(path, "r", (error, fd) => (error ? resolve() : fsync(fd, () => close(fd, () => resolve())))));
}

function syncAndClose(fd: number): Promise<void> {
  return new Promise((resolve) => fsync(fd, () => close(fd, () => resolve())));
}

function closeQuietly(fd: number): void {
  close(fd, () => undefined);
}

/** The process's group commit (shared across module reloads, like the run registry). */
export function groupCommit(): GroupCommit {
  return processGlobal("pi-flow.group-commit", () => new GroupCommit());
}
