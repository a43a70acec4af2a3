// One run's lifecycle, owned in one place for every kind of run (a delegated child, a workflow's
// agent() child, a workflow root). launchChild and launchWorkflow stand on it; the dbos backend and
// worktree isolation hook into the steps launchChild hands it (docs/architecture.md, "Seams").
//
// Lifecycle of one run:
//  1. the run is created in the store (registered, its launch evidence written);
//  2. `prepare` sets up what belongs to the run's kind and returns its cleanup (a prepare that
//     throws ends the run failed at once: it is registered, so it must settle);
//  3. one AbortController stops the work: an operator cancel (writer.onCancel), the parent's signal
//     (foreground) or the time limit aborts it;
//  4. the work waits for a slot if it takes one (the run is `queued` meanwhile), then runs; the
//     time limit counts from here, not from when it was queued;
//  5. whatever the work returns, or `recover` makes of why it threw, `settle` writes as the outcome
//     (a settle that throws still ends the run, failed: it never stays live);
//  6. the cleanup, the timer and the parent-signal listener are removed, whatever happened.
import type { RunView } from "../../contract/run-schema.ts";
import type { CreateRunInput, RunStore, RunWriter, SettleResult } from "../../runs/index.ts";
import { childTimeout } from "../../harnesses/index.ts";

/** A bounded set of places a run waits for (child/slots.ts); the release frees the place. */
export interface SlotQueue {
  readonly available: boolean;
  acquire(signal?: AbortSignal): Promise<() => void>;
}

export interface RunLifecycle<Result> {
  runs: RunStore;
  create: CreateRunInput;
  /** Foreground only: the parent tool's signal; aborting it stops the work. */
  signal?: AbortSignal;
  /** Background children wait here for a free slot. */
  slots?: SlotQueue;
  /** The work marks the run running itself (a fleet child, once a worker takes it off the queue). */
  workMarksRunning?: boolean;
  /** Aborts the work this long after it starts running (with a TimeoutError reason). */
  timeoutMs?: number;
  /** Kind-specific set-up once the run exists; what it returns runs before the run settles, given its result. */
  prepare?(writer: RunWriter): ((result: Result) => void) | void;
  /** The work itself; `signal` aborts on cancel, the parent's abort or the time limit. */
  work(writer: RunWriter, signal: AbortSignal): Promise<Result>;
  /** What the work's throw means as a result, knowing whether (and why) it was stopped. */
  recover(error: unknown, signal: AbortSignal): Result;
  /** Writes the run's outcome. If it throws, the run still settles, failed with why (settleUnwritten). */
  settle(writer: RunWriter, result: Result): SettleResult | Promise<SettleResult>;
}

export interface StartedRun {
  runId: string;
  /** The run as it stands once accepted and registered. */
  accepted: RunView;
  /** Settles with the run; never rejects. */
  settled: Promise<SettleResult>;
}

export function startRun<Result>(lifecycle: RunLifecycle<Result>): StartedRun {
  const { signal, slots, timeoutMs } = lifecycle;
  const writer = lifecycle.runs.create(lifecycle.create);
  let cleanup: ((result: Result) => void) | void;
  try {
    cleanup = lifecycle.prepare?.(writer);
  } catch (error) {
    // The run is registered: it ends failed, never left live with nothing to settle it.
    const settled = writer.settleUnwritten(`the run could not start: ${messageOf(error)}`);
    return { runId: writer.runId, accepted: settled.view, settled: Promise.resolve(settled) };
  }
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const cancel = () => controller.abort();
  writer.onCancel(cancel);
  signal?.addEventListener("abort", cancel, { once: true });
  if (signal?.aborted) cancel();

  const run = async (): Promise<Result> => {
    const release = await slots?.acquire(controller.signal);
    if (!lifecycle.workMarksRunning) writer.markRunning();
    if (timeoutMs !== undefined) timer = setTimeout(() => controller.abort(childTimeout()), timeoutMs);
    try {
      return await lifecycle.work(writer, controller.signal);
    } finally {
      release?.();
    }
  };
  const settled = run()
    .catch((error: unknown) => lifecycle.recover(error, controller.signal))
    .then((result) => {
      cleanup?.(result);
      return lifecycle.settle(writer, result);
    })
    // A settle that throws (a write, a hook, building the view) still ends the run, failed: else it
    // stays live in this process, and a wait on it or a foreground receipt never returns.
    .catch((error: unknown) => writer.settleUnwritten(`the run could not settle: ${messageOf(error)}`))
    .finally(() => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener("abort", cancel);
    });
  return { runId: writer.runId, accepted: writer.view(), settled };
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
