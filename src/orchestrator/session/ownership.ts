/**
 * Result ownership of background runs (tool-calling contract, section 11). A background run's
 * completion reaches the parent at most once: pulled by a wait, or pushed in a completion message
 * (several settled runs may share one; see completion-batch.ts). A wait
 * claims the result before it awaits; concurrent waiters share one record per run, so one
 * cancelled waiter cannot hand the result back while another still waits. When every waiter
 * cancels without seeing the settlement, ownership returns to what it was, and a notification
 * that was suppressed meanwhile is sent exactly once.
 */

interface OwnershipState {
  /** Waiters currently blocked on this run. */
  waiters: number;
  /** A waiter saw the settlement: the result is delivered, never pushed. */
  consumed: boolean;
  /** The run settled; `publish` may run once nobody owns the result. */
  settled: boolean;
  published: boolean;
  publish?: () => void;
}

export interface WaitClaim {
  /** The waiter saw the run settle and delivered its result. */
  observed(): void;
  /** The waiter gave up (aborted or timed out) without delivering the result. */
  release(): void;
}

export class ResultOwnership {
  private readonly states = new Map<string, OwnershipState>();
  private readonly schedule: (send: () => void) => void;

  /** `schedule` defers a notification; the default defers to the next macrotask. */
  constructor(schedule: (send: () => void) => void = (send) => void setImmediate(send)) {
    this.schedule = schedule;
  }

  private state(runId: string): OwnershipState {
    // A forgotten run starts over with no publisher, so it can never be pushed twice.
    let state = this.states.get(runId);
    if (!state) {
      state = { waiters: 0, consumed: false, settled: false, published: false };
      this.states.set(runId, state);
    }
    return state;
  }

  /** A background run was accepted: `publish` hands its completion to the outgoing message, once. */
  track(runId: string, publish: () => void): void {
    this.state(runId).publish = publish;
  }

  /** The run settled. Its message goes out later, unless a waiter owns the result by then. */
  settled(runId: string): void {
    // An untracked or already delivered run has nothing to publish; do not start tracking it again.
    const state = this.states.get(runId);
    if (!state) return;
    state.settled = true;
    this.schedulePublication(runId);
  }

  /** Claims the result before awaiting it. Every claim ends with observed() or release(). */
  claim(runId: string): WaitClaim {
    const state = this.state(runId);
    state.waiters++;
    let ended = false;
    const end = (sawSettlement: boolean) => {
      if (ended) return;
      ended = true;
      state.waiters--;
      if (sawSettlement) state.consumed = true;
      if (state.waiters > 0) return;
      // Delivered, or never to be pushed: there is nothing left to track.
      if (state.consumed || !state.publish) this.states.delete(runId);
      // The last waiter gave up: a completion suppressed meanwhile is recovered once.
      else this.schedulePublication(runId);
    };
    return { observed: () => end(true), release: () => end(false) };
  }

  /** Runs whose ownership is still being tracked; settled and delivered runs are forgotten. */
  get trackedCount(): number {
    return this.states.size;
  }

  private schedulePublication(runId: string): void {
    const state = this.states.get(runId);
    if (!state?.settled || !state.publish) return;
    this.schedule(() => {
      // Re-checked at send time: a waiter may have claimed the result since.
      if (state.published || state.consumed || state.waiters > 0) return;
      state.published = true;
      this.states.delete(runId);
      state.publish?.();
    });
  }
}
