import { randomBytes } from "node:crypto";
import { open, rename, rm, writeFile, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { TMP_PREFIX } from "../fsio.ts";
import { processGlobal } from "../../process/global.ts";

/**
 * Group commit: the run store's disk work that nothing waits for, taken off the critical path.
 *
 * Writers make what a crash must not lose visible at once with plain synchronous writes (those
 * survive the process dying, SIGKILL included) and hand two kinds of work to the process's group
 * commit:
 *
 * - paths that a power loss must not undo, to be fsynced;
 * - rewrites of a file that is only a cache (a run's record), coalesced per file: however often a
 *   run's record changes in a turn, it is rewritten once, with its latest content.
 *
 * One batch per turn of the event loop does both on libuv's thread pool, however many runs queued
 * work: many runs that start or settle together cost one batch, and the host's event loop is not
 * held up by file creation and renames. Batches run one after another, in phases that keep the
 * documented order across a power loss: final values (and the directory entries that placed them)
 * before journals and logs, journals before records; a record is rewritten after the fsyncs of its
 * batch. A process killed before a batch runs loses only cache rewrites: readers rebuild a run from
 * its journal when its record is missing or stale.
 */
export type CommitPhase = "final" | "journal" | "record";
const PHASES: readonly CommitPhase[] = ["final", "journal", "record"];

export interface Rewrite {
  /** The file's content as of now; called when the batch writes it, so the latest state wins. */
  render(): string;
  /** Also fsync the new file and its directory (a settled run's record). */
  durable: boolean;
  /** Test seam: called after the temp file is written, before it replaces the file. */
  beforeRename?: () => void;
}

interface Batch {
  syncs: Map<CommitPhase, Set<string>>;
  rewrites: Map<string, Rewrite>;
}

const emptyBatch = (): Batch => ({ syncs: new Map(PHASES.map((phase) => [phase, new Set()])), rewrites: new Map() });

export class GroupCommit {
  private queued = emptyBatch();
  private scheduled = false;
  private current: Promise<void> = Promise.resolve();
  /** Batches, fsyncs and rewrites done so far (what the group saves is visible here). */
  readonly stats = { batches: 0, fsyncs: 0, rewrites: 0 };

  /** Queue `path` (a file or a directory) to be made durable in `phase` of the next batch. */
  enqueue(phase: CommitPhase, path: string): void {
    this.queued.syncs.get(phase)!.add(path);
    this.schedule();
  }

  /**
   * Rewrite the file at `path` atomically in the next batch. A rewrite queued again before the
   * batch runs replaces the earlier one (one write per file per batch); `durable` sticks.
   */
  rewrite(path: string, rewrite: Rewrite): void {
    const earlier = this.queued.rewrites.get(path);
    this.queued.rewrites.set(path, earlier?.durable && !rewrite.durable ? { ...rewrite, durable: true } : rewrite);
    this.schedule();
  }

  /** Resolves once everything queued before the call is written and durable (or could not be). */
  async idle(): Promise<void> {
    while (this.scheduled) await new Promise((resolve) => setImmediate(resolve));
    await this.current;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const batch = this.queued;
      this.queued = emptyBatch();
      this.current = this.current.then(() => this.commit(batch));
    });
  }

  private async commit(batch: Batch): Promise<void> {
    this.stats.batches++;
    for (const phase of PHASES) {
      const paths = [...batch.syncs.get(phase)!];
      this.stats.fsyncs += paths.length;
      await Promise.all(paths.map(syncPath));
    }
    const durable = new Set<string>();
    await Promise.all(
      [...batch.rewrites].map(async ([path, rewrite]) => {
        this.stats.rewrites++;
        if ((await replaceFile(path, rewrite)) && rewrite.durable) durable.add(path).add(dirname(path));
      }),
    );
    this.stats.fsyncs += durable.size;
    await Promise.all([...durable].map(syncPath));
  }
}

/** Write a sibling temp file, then rename it over `path`; false when it could not be done. */
async function replaceFile(path: string, rewrite: Rewrite): Promise<boolean> {
  const tmp = `${dirname(path)}/${TMP_PREFIX}${randomBytes(6).toString("hex")}`;
  try {
    await writeFile(tmp, rewrite.render(), { mode: 0o600, flag: "wx" });
    rewrite.beforeRename?.();
    await rename(tmp, path);
    return true;
  } catch {
    // The run's directory was pruned or the disk refused: the record is a cache, readers use the journal.
    await rm(tmp, { force: true }).catch(() => undefined);
    return false;
  }
}

async function syncPath(path: string): Promise<void> {
  // Best effort: a file pruned meanwhile, or a platform that cannot open a directory, is fine.
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, "r");
    await handle.sync();
  } catch {
    /* nothing to make durable */
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** The process's group commit (shared across module reloads, like the run registry). */
export function groupCommit(): GroupCommit {
  return processGlobal("pi-flow.group-commit", () => new GroupCommit());
}
