/**
 * The steers a fleet child has not read, as its coordinator can tell: it cannot see the child's
 * session on the worker, so it asks the database (fleet.ts `unreadSteers`: steers no worker has
 * taken, and those handed to the child that no turn has read yet) and adds the steers it wrote
 * lately that the answer does not hold. The bound on unread steers (steer-budget.ts: 8 steers,
 * 256 KiB) then holds on the fleet as it does locally. A steer counts from its write: for
 * SETTLE_MS even when the database does not show it (its worker takes it off the table a moment
 * before it saves it with the child's session), then as the database shows it; one the child has
 * read counts until its worker saves the turn that read it (at the turn's end). A look follows each
 * steer written, and another every LOOK_MS while any is unread.
 */

/** How often the database is asked again while a steer waits unread. */
export const LOOK_MS = 1000;
/** How long a steer written counts as unread whatever the database shows (a worker's look at its children's steers is every 500 ms). */
export const SETTLE_MS = 2000;

export interface FleetUnread {
  /** A steer is in the database now (its write committed). */
  written(message: string): void;
  /** The steers the child has not read, oldest first as far as the database says, then those written lately it does not show. */
  unread(): readonly string[];
  /**
   * The child's answer is in: no more looks, and nothing unread from here on (the steers still in
   * the database are the undelivered ones, which the coordinator takes from there).
   */
  close(): void;
  /**
   * The child was stopped without an answer: one last look, then closed. What it had not read as
   * the database shows it (handed over, or waiting), and the steers written lately it does not show
   * (on their way to the child); what the last look saw when the database cannot be read.
   */
  closeStopped(): Promise<string[]>;
}

export function fleetUnread(look: () => Promise<string[]>, now: () => number = Date.now): FleetUnread {
  let seen: readonly string[] = [];
  /** Written lately: the database may not show them yet. */
  const recent: { message: string; at: number }[] = [];
  let looking = false;
  let again = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const unread = (): string[] => {
    if (closed) return [];
    const shown = [...seen];
    const extra: string[] = [];
    for (const { message } of recent) {
      const index = shown.indexOf(message);
      if (index >= 0) shown.splice(index, 1);
      else extra.push(message);
    }
    return [...seen, ...extra];
  };
  const schedule = () => {
    clearTimeout(timer);
    timer = undefined;
    // unref: a look never keeps a process alive on its own; the run waiting on the child does.
    if (!closed && seen.length + recent.length > 0) timer = setTimeout(() => void refresh(), LOOK_MS).unref();
  };
  const refresh = async (): Promise<void> => {
    if (closed) return;
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    const began = now();
    try {
      seen = await look();
      // A steer written SETTLE_MS before this look began is, by now, where the database shows it, or read.
      while (recent.length > 0 && began - recent[0]!.at >= SETTLE_MS) recent.shift();
    } catch {
      // The database is away: the counts stay as they were (a steer could not be written either).
    } finally {
      looking = false;
    }
    if (again) {
      again = false;
      return refresh();
    }
    schedule();
  };
  return {
    written(message) {
      recent.push({ message, at: now() });
      void refresh();
    },
    unread,
    close() {
      closed = true;
      clearTimeout(timer);
    },
    async closeStopped() {
      clearTimeout(timer);
      timer = undefined;
      try {
        seen = await look();
      } catch {
        // The database is away: what the last look saw stands.
      }
      const left = unread();
      closed = true;
      clearTimeout(timer);
      return left;
    },
  };
}
