// Generated from runtime/cpu-meter.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// The CPU time budget of one run's VM, inside the worker, and what the main thread's watchdog reads
// of it through shared memory (protocol.ts SHARED_*).
import { SHARED_SPENT, SHARED_TURN, SHARED_TURN_AT } from "./protocol.js";

/**
 * Time the VM spends running: entered around every evaluation, job queue drain and reply, so time
 * spent awaiting the host (children, tools) never counts. QuickJS's interrupt handler asks over().
 */
export class CpuMeter {
                   budgetMs        ;
          spentMs = 0;
          since                    ;
  /** Where the main thread's watchdog reads the time spent and which turn is running. */
                   shared            ;
                   clockOrigin        ;
          turns = 0;
  /** Sticky: once over budget, every later check interrupts too. */
  exceeded = false;

  constructor(budgetMs        , shared            , clockOrigin        ) {
    this.budgetMs = budgetMs;
    this.shared = shared;
    this.clockOrigin = clockOrigin;
  }

  run   (work         )    {
    const outer = this.since === undefined;
    if (outer) {
      this.since = performance.now();
      this.turns = this.turns >= 0x7fffffff ? 1 : this.turns + 1;
      // When first, then which: a watchdog that reads which first never pairs a turn with an older start.
      Atomics.store(this.shared, SHARED_TURN_AT, Math.max(0, Math.min(0x7fffffff, Date.now() - this.clockOrigin)));
      Atomics.store(this.shared, SHARED_TURN, this.turns);
    }
    try {
      return work();
    } finally {
      if (outer && this.since !== undefined) {
        this.spentMs += performance.now() - this.since;
        this.since = undefined;
        // Spent first, then idle: a watchdog that reads them in the other order can only under-count.
        Atomics.store(this.shared, SHARED_SPENT, Math.ceil(this.spentMs));
        Atomics.store(this.shared, SHARED_TURN, 0);
      }
    }
  }

  over()          {
    if (!this.exceeded && this.since !== undefined && this.spentMs + (performance.now() - this.since) > this.budgetMs) this.exceeded = true;
    return this.exceeded;
  }
}
