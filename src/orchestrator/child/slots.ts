import { FlowError } from "../../contract/errors.ts";
import { processGlobal } from "../../../runtime/process-global.ts";

/**
 * A counting semaphore for background children: at most `limit` run at once, the rest wait in
 * arrival order, and at most `maxWaiting` wait (callers check `full` before they queue one more).
 * A waiter whose signal aborts leaves the queue without taking a slot.
 */
export class Slots {
  readonly limit: number;
  readonly maxWaiting: number;
  private active = 0;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(limit: number, maxWaiting = Number.POSITIVE_INFINITY) {
    this.limit = Math.max(1, Math.floor(limit));
    this.maxWaiting = Math.max(0, Math.floor(maxWaiting));
  }

  get available(): boolean {
    return this.active < this.limit && this.waiting.length === 0;
  }

  /** A new arrival would have to wait, and as many as may wait already do. */
  get full(): boolean {
    return !this.available && this.waiting.length >= this.maxWaiting;
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

/**
 * How many background children may wait for a slot in one session (PI_FLOW_MAX_QUEUED, default
 * 500). Each waiting run already has its directory, journal and place in the registry; beyond the
 * bound a delegation is refused rather than queued without end.
 */
export function backgroundQueueLimit(env: Record<string, string | undefined>): number {
  const raw = env.PI_FLOW_MAX_QUEUED?.trim();
  const value = raw ? Number(raw) : NaN; // set but empty is unset, not 0
  return Number.isInteger(value) && value >= 0 ? value : 500;
}

/**
 * How many foreground workflow roots may run at once in one process (PI_FLOW_MAX_WORKFLOWS,
 * default 8). Each is a sandbox (a worker thread, up to its memory limit) and up to `concurrency`
 * children: a parent's script that starts a hundred at once would otherwise hold a hundred of both.
 */
export function foregroundWorkflowLimit(env: Record<string, string | undefined>): number {
  const value = Number(env.PI_FLOW_MAX_WORKFLOWS);
  return Number.isInteger(value) && value >= 1 ? value : 8;
}

/**
 * The process's slots for foreground workflow roots: one pool, since memory is the process's (one
 * per setting, read at each launch, so a setting changed within the process takes effect).
 */
export function foregroundWorkflowSlots(): Slots {
  const pools = processGlobal("pi-flow.workflow-slots", () => new Map<string, Slots>());
  const limit = foregroundWorkflowLimit(process.env);
  const waiting = backgroundQueueLimit(process.env);
  const key = `${limit}/${waiting}`;
  let slots = pools.get(key);
  if (!slots) pools.set(key, (slots = new Slots(limit, waiting)));
  return slots;
}

/** The refusal of a background launch when `slots` is full: it names the bound. */
export function queueFull(slots: Slots, supervised = true): FlowError {
  // external_runs cannot wait in a session not saved to a file: there a run's completion message is the signal.
  const next = supervised ? "Wait for some with external_runs, then delegate again." : "Delegate again once some have ended: their completion messages say when.";
  return new FlowError(
    "request_invalid",
    `Too many background runs: at most ${slots.maxWaiting} background runs may wait for a slot (PI_FLOW_MAX_QUEUED), and ${slots.limit} run at once. ${next}`,
  );
}

/** The refusal of a foreground workflow when the process's workflow slots are full. */
export function foregroundQueueFull(slots: Slots): FlowError {
  return new FlowError(
    "request_invalid",
    `Too many workflows: ${slots.limit} foreground workflows may run at once in this process (PI_FLOW_MAX_WORKFLOWS) and ${slots.maxWaiting} wait for a slot (PI_FLOW_MAX_QUEUED). Start fewer at once, or wait for some to end.`,
  );
}
