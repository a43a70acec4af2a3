/**
 * A counting semaphore for background children: at most `limit` run at once, the rest wait in
 * arrival order. A waiter whose signal aborts leaves the queue without taking a slot.
 */
export class Slots {
  private readonly limit: number;
  private active = 0;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(limit: number) {
    this.limit = Math.max(1, Math.floor(limit));
  }

  get available(): boolean {
    return this.active < this.limit && this.waiting.length === 0;
  }

  /** Resolves with the release function once a slot is free; rejects if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.active--;
      this.waiting.shift()?.grant();
    };
    if (this.available) {
      this.active++;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          this.active++;
          resolve(release);
        },
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error("aborted while queued"));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }
}

/** How many background children may run at once in one session (PI_FLOW_MAX_BACKGROUND, default 4). */
export function backgroundLimit(env: Record<string, string | undefined>): number {
  const value = Number(env.PI_FLOW_MAX_BACKGROUND);
  return Number.isInteger(value) && value >= 1 ? value : 4;
}
