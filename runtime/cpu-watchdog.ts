// The main thread's watch on a run's CPU. QuickJS asks for cpuMs between its operations, so one
// native call that runs long (an indexOf of megabytes in megabytes) is past its reach: this
// watchdog reads what the worker publishes (protocol.ts's shared words) and calls `onPast` once
// the run's CPU is past cpuMs by the grace.
import { SHARED_SPENT, SHARED_TURN, SHARED_TURN_AT } from "./protocol.ts";

/**
 * How far past cpuMs the watchdog lets a run go before it stops it: QuickJS's own check ends an
 * ordinary spin at cpuMs, so the watchdog only meets a single call that never returns to it.
 */
export const CPU_WATCHDOG_GRACE_MS = 1000;

/**
 * How long a turn the watchdog sees for the first time has been running. It started after the
 * watchdog's last look, so no longer than that, and the wall clock the worker stated its start by
 * can step either way: a step forward is cut to the last look, a step back reads as just started
 * (the turn is then timed from here on this thread's monotonic clock).
 */
export function believedRunning(times: { sinceLastLook: number; byWallClock: number }): number {
  return Math.max(0, Math.min(times.sinceLastLook, times.byWallClock));
}

export class CpuWatchdog {
  private readonly shared: Int32Array;
  private readonly cpuMs: number;
  private readonly onPast: () => void;
  /** Epoch ms the worker states its turns' starts from. */
  private clockOrigin = 0;
  /** The running turn the watchdog last saw and when it started, on this thread's performance.now(). */
  private seenTurn: { turn: number; startedAt: number } | undefined;
  /** When the watchdog last looked (performance.now()): a turn it had not seen started after. */
  private lastLook = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(shared: Int32Array, cpuMs: number, onPast: () => void) {
    this.shared = shared;
    this.cpuMs = cpuMs;
    this.onPast = onPast;
  }

  /** Starts watching a worker that states its turns' starts from `clockOrigin` (epoch ms). */
  start(clockOrigin: number): void {
    this.clockOrigin = clockOrigin;
    this.lastLook = performance.now();
    this.watch(this.cpuMs + CPU_WATCHDOG_GRACE_MS);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  // The delay is at most cpuMs (ceiling 1 h) and the grace: well inside what Node's timers take.
  private watch(delayMs: number): void {
    this.timer = setTimeout(() => this.check(), delayMs);
  }

  /**
   * A running turn is timed on this thread's monotonic clock from the start the worker states,
   * believed only between the last look and now (a wall clock that steps moves it no further), and
   * looked at again within the grace; otherwise the watchdog looks again when the rest of the
   * budget could be spent: rarely, since awaiting children spends none.
   */
  private check(): void {
    if (this.stopped) return;
    // Spent before turn (the worker writes them in the other order): a turn ending between the two
    // reads is then counted in neither, never in both.
    const spent = Atomics.load(this.shared, SHARED_SPENT);
    const turn = Atomics.load(this.shared, SHARED_TURN);
    const stated = Atomics.load(this.shared, SHARED_TURN_AT);
    const now = performance.now();
    if (turn === 0) this.seenTurn = undefined;
    else if (this.seenTurn?.turn !== turn) {
      this.seenTurn = { turn, startedAt: now - believedRunning({ sinceLastLook: now - this.lastLook, byWallClock: Date.now() - this.clockOrigin - stated }) };
    }
    this.lastLook = now;
    const running = this.seenTurn ? now - this.seenTurn.startedAt : 0;
    const left = this.cpuMs + CPU_WATCHDOG_GRACE_MS - spent - running;
    if (left > 0) return this.watch(this.seenTurn ? Math.min(left, CPU_WATCHDOG_GRACE_MS) : left);
    this.onPast();
  }
}
