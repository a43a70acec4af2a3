import type { RunView } from "../../contract/run-schema.ts";

/**
 * Batches background completions so the parent spends one turn on many. Result ownership queues
 * each completion as a `send` that re-checks, when the batch goes out, whether a wait claimed the
 * result meanwhile; if not, the send hands its view to `deliver`, which adds it to the message.
 *
 * When the batch goes out: `windowMs` after its first completion, if the parent is idle then;
 * while the parent is busy (a turn, a compaction), it waits until the parent settles, so every
 * completion of one busy stretch lands in one message. Each message triggers one turn. Without a
 * bound publisher (between a reload's shutdown and the next start) the batch waits for one.
 */
export interface BatchPublisher {
  /** Sends one message carrying these completions (at least one). */
  send(views: RunView[]): void;
  /** Whether the parent is idle; throws once its session is gone. */
  idle(): boolean;
}

export const DEFAULT_COMPLETION_WINDOW_MS = 250;

/** `PI_FLOW_COMPLETION_WINDOW_MS`: how long an idle parent's batch stays open (0: next tick). */
export function completionWindow(env: Record<string, string | undefined>): number {
  const raw = Number(env.PI_FLOW_COMPLETION_WINDOW_MS);
  return env.PI_FLOW_COMPLETION_WINDOW_MS !== undefined && Number.isFinite(raw) && raw >= 0 ? raw : DEFAULT_COMPLETION_WINDOW_MS;
}

export class CompletionBatch {
  private readonly windowMs: number;
  private readonly pending: (() => void)[] = [];
  private collecting: RunView[] | undefined;
  private publisher: BatchPublisher | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(windowMs: number) {
    this.windowMs = windowMs;
  }

  /** Completions queued and not yet sent (some may turn out to be owned by a wait). */
  get size(): number {
    return this.pending.length;
  }

  /** Queues a completion's send; it runs when the batch goes out. */
  enqueue(send: () => void): void {
    this.pending.push(send);
    this.arm();
  }

  /** A send that found the result still unowned: its view joins the message being built. */
  deliver(view: RunView): void {
    if (this.collecting) this.collecting.push(view);
    else this.enqueue(() => this.collecting?.push(view));
  }

  /** A host (re)binds to its session: it delivers from now on, including what waited for it. */
  bind(publisher: BatchPublisher): void {
    this.publisher = publisher;
    if (this.pending.length > 0) this.arm();
  }

  unbind(): void {
    this.publisher = undefined;
    this.disarm();
  }

  /** The parent settled (no run, nothing queued): whatever waited for it goes out now. */
  parentSettled(): void {
    if (this.pending.length === 0) return;
    this.disarm();
    this.flush();
  }

  private arm(): void {
    if (this.timer || !this.publisher) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flushIfIdle();
    }, this.windowMs);
    this.timer.unref?.();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flushIfIdle(): void {
    let idle: boolean;
    try {
      idle = this.publisher?.idle() ?? false;
    } catch {
      return; // the session is gone: keep the batch for a publisher that may bind again
    }
    if (idle) this.flush();
    else this.arm(); // busy: agent_settled sends it; checking again also covers a compaction that ends quietly
  }

  private flush(): void {
    const publisher = this.publisher;
    if (!publisher) return;
    const views: RunView[] = [];
    this.collecting = views;
    try {
      for (const send of this.pending.splice(0)) send();
    } finally {
      this.collecting = undefined;
    }
    if (views.length > 0) publisher.send(views);
  }
}
