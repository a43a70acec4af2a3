// A FIFO of host calls with at most `limit` running: a flood of calls waits here instead of
// reaching the host all at once. Jobs start in the order they were pushed, at most
// STARTS_PER_TURN in one turn of the event loop: a burst (a parallel() of 32 agents, each creating
// a run and a child session) becomes short host tasks that the host's timers and input interleave
// with, instead of one long task that stalls the parent's interface. A job beyond the budget starts
// in a later turn; like any queued job, it never starts if the run ends first.

/** A queued job; it calls `release` once when its host call has ended. */
export type QueuedJob = (release: () => void) => void;

/** Jobs started at once before the queue yields to the event loop. */
export const STARTS_PER_TURN = 2;

export class CallQueue {
  private readonly limit: number;
  private readonly open: () => boolean;
  private readonly waiting: QueuedJob[] = [];
  private running = 0;
  /** Jobs started in this turn; a scheduled callback resets it in the next one. */
  private startedThisTurn = 0;
  private nextTurn = false;

  /** `open()` false stops starting jobs (the run has ended). */
  constructor(limit: number, open: () => boolean) {
    this.limit = limit;
    this.open = open;
  }

  push(job: QueuedJob): void {
    this.waiting.push(job);
    this.drain();
  }

  private drain(): void {
    while (this.running < this.limit && this.waiting.length > 0 && this.open()) {
      if (this.startedThisTurn >= STARTS_PER_TURN) return this.scheduleNextTurn();
      const job = this.waiting.shift()!;
      this.running++;
      this.startedThisTurn++;
      this.scheduleNextTurn();
      let released = false;
      job(() => {
        if (released) return;
        released = true;
        this.running--;
        this.drain();
      });
    }
  }

  private scheduleNextTurn(): void {
    if (this.nextTurn) return;
    this.nextTurn = true;
    setImmediate(() => {
      this.nextTurn = false;
      this.startedThisTurn = 0;
      this.drain();
    });
  }
}
