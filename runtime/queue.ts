// A FIFO of host calls with at most `limit` running: a flood of calls waits here instead of
// reaching the host all at once. Jobs start in the order they were pushed.

/** A queued job; it calls `release` once when its host call has ended. */
export type QueuedJob = (release: () => void) => void;

export class CallQueue {
  private readonly limit: number;
  private readonly open: () => boolean;
  private readonly waiting: QueuedJob[] = [];
  private running = 0;

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
    while (this.running < this.limit && this.open()) {
      const job = this.waiting.shift();
      if (job === undefined) return;
      this.running++;
      let released = false;
      job(() => {
        if (released) return;
        released = true;
        this.running--;
        this.drain();
      });
    }
  }
}
