import type { RunView } from "../contract/run-schema.ts";
import type { RunKind } from "./ids.ts";
import type { RunOutcome } from "../contract/run-schema.ts";
import type { CachedJournal } from "./journal/journal-cache.ts";
import type { ChangeStats, ChildCounts, FinalFormat, FinalMeta, RunError, TaskIdentity, Usage } from "./journal/journal.ts";
import { processGlobal } from "../../runtime/process-global.ts";

/**
 * The live registry: the only source of liveness. A run is live while an owner in this process has
 * registered it and not yet settled it; evidence on disk never makes a run live. The registry also
 * keeps, for a bounded number of recently settled runs, the settled view and the canonical value in
 * memory, so `refs.final` resolves even when writing the value failed, and every run has one stable
 * completion promise that waiters (and result ownership, issue 7) can share.
 */
export interface MemoryFinal {
  /** Redacted canonical value. */
  value: unknown;
  format: FinalFormat;
  redacted: boolean;
  /** Whether the value is on disk (its terminal line or final file); an unsaved value exists only here. */
  saved: boolean;
}

export interface LiveEntry {
  readonly runId: string;
  readonly kind: RunKind;
  /** Scope token (project + session): a store only ever sees entries of its own scope. */
  readonly scope: string;
  readonly task: TaskIdentity;
  readonly background: boolean;
  readonly startedAt: string;
  status: "queued" | "running" | "settled";
  children?: ChildCounts;
  usage?: Usage;
  changes?: ChangeStats;
  outputBytes: number;
  diagnosticsBytes: number;
  /** Set once settled: how it ended, and the settled view. */
  terminal?: { outcome: RunOutcome; error?: RunError; endedAt: string };
  view?: RunView;
  final?: MemoryFinal;
  /**
   * The settled journal's stamp and integrity, as the record will cache them: readers in this
   * process trust it while the record's rewrite is still queued in the group commit.
   */
  journal?: CachedJournal;
  /** What the terminal line says of the final value (a value too big to keep here is read from its file). */
  finalMeta?: FinalMeta;
  readonly completion: Promise<RunView>;
  /** Insertion order; list bookmarks rely on it. */
  readonly order: number;
}

export interface RegisterInput {
  runId: string;
  kind: RunKind;
  scope: string;
  task: TaskIdentity;
  background: boolean;
  startedAt: string;
  status?: "queued" | "running";
}

export type CancelResult = "requested" | "terminal";

interface Slot {
  entry: LiveEntry;
  resolve: (view: RunView) => void;
  abort?: (reason: string) => void;
  cancelRequested: boolean;
}

export class RunRegistry {
  private readonly slots = new Map<string, Slot>();
  private readonly maxSettled: number;
  /** Settled entries held now: eviction needs the count on every settle, so it is kept, not counted. */
  private settledCount = 0;
  private counter = 0;

  constructor(opts: { maxSettled?: number } = {}) {
    this.maxSettled = opts.maxSettled ?? 256;
  }

  register(input: RegisterInput): LiveEntry {
    if (this.slots.has(input.runId)) throw new Error(`run ${input.runId} is already registered`);
    let resolve!: (view: RunView) => void;
    const completion = new Promise<RunView>((r) => (resolve = r));
    const entry: LiveEntry = {
      runId: input.runId,
      kind: input.kind,
      scope: input.scope,
      task: input.task,
      background: input.background,
      startedAt: input.startedAt,
      status: input.status ?? "running",
      outputBytes: 0,
      diagnosticsBytes: 0,
      completion,
      order: this.counter++,
    };
    this.slots.set(input.runId, { entry, resolve, cancelRequested: false });
    return entry;
  }

  get(runId: string): LiveEntry | undefined {
    return this.slots.get(runId)?.entry;
  }

  isLive(runId: string): boolean {
    const entry = this.get(runId);
    return entry !== undefined && entry.status !== "settled";
  }

  /** Entries of one scope and kind in registration order, settled ones included. */
  entries(scope: string, kind: RunKind): LiveEntry[] {
    const out: LiveEntry[] = [];
    for (const { entry } of this.slots.values()) if (entry.scope === scope && entry.kind === kind) out.push(entry);
    return out;
  }

  /** The owner's stop hook. A cancel that arrived before the hook was set is delivered on setting it. */
  onCancel(runId: string, abort: (reason: string) => void): void {
    const slot = this.slots.get(runId);
    if (!slot) return;
    slot.abort = abort;
    if (slot.cancelRequested && slot.entry.status !== "settled") abort("cancel requested");
  }

  /** Operator stop. `requested` does not mean the run has stopped; undefined: not registered here. */
  cancel(runId: string, reason = "cancel requested"): CancelResult | undefined {
    const slot = this.slots.get(runId);
    if (!slot) return undefined;
    if (slot.entry.status === "settled") return "terminal";
    if (!slot.cancelRequested) {
      slot.cancelRequested = true;
      slot.abort?.(reason);
    }
    return "requested";
  }

  cancelRequested(runId: string): boolean {
    return this.slots.get(runId)?.cancelRequested ?? false;
  }

  /** The stable completion promise; undefined when this process never owned the run. */
  settled(runId: string): Promise<RunView> | undefined {
    return this.slots.get(runId)?.entry.completion;
  }

  /**
   * Mark the run settled, keep its value in memory, then build the settled view (`present` sees the
   * entry already settled, so the view it builds is not live) and resolve the completion promise.
   */
  settle(
    runId: string,
    terminal: NonNullable<LiveEntry["terminal"]>,
    final: MemoryFinal | undefined,
    present: (entry: LiveEntry) => RunView,
  ): RunView {
    const slot = this.slots.get(runId);
    if (!slot) throw new Error(`run ${runId} is not registered`);
    if (slot.entry.status === "settled") throw new Error(`run ${runId} is already settled`);
    slot.entry.status = "settled";
    this.settledCount++;
    slot.entry.terminal = terminal;
    if (final) slot.entry.final = final;
    slot.abort = undefined;
    const view = present(slot.entry);
    slot.entry.view = view;
    slot.resolve(view);
    this.evict();
    return view;
  }

  /** Forget a run (its owner or the result owner is done with it). A live run cannot be released. */
  release(runId: string): boolean {
    const slot = this.slots.get(runId);
    if (!slot || slot.entry.status !== "settled") return false;
    this.settledCount--;
    return this.slots.delete(runId);
  }

  private evict(): void {
    // Map iteration is insertion order, so the oldest settled entries go first. A value whose final
    // file could not be written exists only here: evicting it would leave refs.final pointing at
    // nothing, so it stays for the life of the process.
    for (const [runId, { entry }] of this.slots) {
      if (this.settledCount <= this.maxSettled) break;
      if (entry.status === "settled" && entry.final?.saved !== false) {
        this.slots.delete(runId);
        this.settledCount--;
      }
    }
  }
}

/** One registry per process, shared even if this module is loaded twice (extension reloads). */
export function processRegistry(): RunRegistry {
  return processGlobal("pi-flow.runs.registry", () => new RunRegistry());
}
