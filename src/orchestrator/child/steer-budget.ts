/**
 * How much steering one run takes. Steers the child has not read yet are bounded in count and
 * bytes (they all reach its next model request together, so more would only grow that request),
 * and so are the steers accepted in any one minute and in the run's whole life (each is journaled,
 * written to the run's diagnostics and kept in the child's transcript). A steer beyond either bound is refused, not
 * queued: the caller learns which bound it met and when steering works again.
 */
export interface SteerLimits {
  /** Steers queued and not yet read by the child. */
  unreadCount: number;
  unreadBytes: number;
  /** The window of the rate bound, and what it admits. */
  windowMs: number;
  windowCount: number;
  windowBytes: number;
  /** Everything one run takes. */
  totalBytes: number;
}

export const STEER_LIMITS: SteerLimits = {
  unreadCount: 8,
  unreadBytes: 256 * 1024,
  windowMs: 60_000,
  windowCount: 30,
  windowBytes: 1024 * 1024,
  totalBytes: 8 * 1024 * 1024,
};

const kib = (bytes: number): string => `${Math.floor(bytes / 1024)} KiB`;
const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8");

export class SteerBudget {
  private readonly limits: SteerLimits;
  private readonly now: () => number;
  /** Steers accepted within the window, oldest first. */
  private readonly recent: { at: number; bytes: number }[] = [];
  private total = 0;

  constructor(limits: SteerLimits = STEER_LIMITS, now: () => number = Date.now) {
    this.limits = limits;
    this.now = now;
  }

  /**
   * Why `message` may not be queued for run `runId` now, given the steers its child has not read
   * yet; undefined when it may (and it is then counted against the window).
   */
  admit(runId: string, message: string, unread: readonly string[]): string | undefined {
    const { unreadCount, unreadBytes, windowMs, windowCount, windowBytes, totalBytes } = this.limits;
    const bytes = utf8Bytes(message);
    if (unread.length >= unreadCount) {
      return `Run ${runId} already has ${unread.length} steers its child has not read (at most ${unreadCount} may wait); they all reach its next model request. Steer again once it has read them.`;
    }
    const waiting = unread.reduce((sum, text) => sum + utf8Bytes(text), 0);
    if (waiting + bytes > unreadBytes) {
      return `Run ${runId}'s unread steers would exceed ${kib(unreadBytes)} with this one (${kib(waiting)} wait already). Steer again once its child has read them, or send less.`;
    }
    if (this.total + bytes > totalBytes) {
      return `Run ${runId} has taken ${kib(this.total)} of steering, and one run takes at most ${kib(totalBytes)}. Cancel it and resume it with a new prompt instead.`;
    }
    const at = this.now();
    while (this.recent.length > 0 && at - this.recent[0]!.at >= windowMs) this.recent.shift();
    const spent = this.recent.reduce((sum, entry) => sum + entry.bytes, 0);
    if (this.recent.length >= windowCount || spent + bytes > windowBytes) {
      const seconds = Math.ceil((windowMs - (at - (this.recent[0]?.at ?? at))) / 1000);
      return `Run ${runId} takes at most ${windowCount} steers and ${kib(windowBytes)} of steering per ${windowMs / 1000} s; it has taken ${this.recent.length} (${kib(spent)}). Steer again in ${seconds} s.`;
    }
    this.recent.push({ at, bytes });
    this.total += bytes;
    return undefined;
  }
}
