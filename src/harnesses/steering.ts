/**
 * The steering inbox of one child. A steer sent before the child's session exists is held here and
 * delivered, in order, once the harness attaches its session; later ones go straight through. The
 * session's queue then delivers every unread message after the child's active tool batch and
 * before its next model request, all in that one request: a steer never interrupts a tool.
 */
export interface SteerChannel {
  /**
   * Queues one message in the child's session; settles once the session holds it (never rejects).
   * A channel that `confirms` says there whether the message is on its way: undefined when it is.
   */
  deliver(message: string): Promise<SteerVerdict | void>;
  /**
   * The channel knows only once `deliver` settles whether the message is on its way (a fleet
   * child's goes through the database, which may say the child has ended): a steer's answer waits for it.
   */
  confirms?: boolean;
  /** Messages the session holds that the child's model has not read yet. */
  unread(): readonly string[];
  /**
   * Messages the session took from its queue into a model request that never answered (the child
   * was stopped as the request began, e.g. at its maxTurns quota): in its context, never read.
   */
  unanswered?(): readonly string[];
}

/** Why a confirming channel did not take a message: the child has ended, or the channel refused it now (`refused` says why). */
export type SteerVerdict = { ended: true } | { refused: string };

/** What became of a message offered to a child: queued (on its way), or not, and why. */
export type SteerOffer = "queued" | "ended" | { refused: string };

/** The diagnostic code of a steer answered `queued` that its child never read (docs/runs.md). */
export const STEER_UNDELIVERED = "steer_undelivered";

/** Where a run notes an undelivered steer: its journal and its diagnostics (a RunWriter). */
export interface SteerEvidence {
  journal(line: { t: "event"; name: string; data: { message: string; why: string } }): void;
  appendDiagnostic(entry: { level: "warn"; code: string; message: string }): void;
}

/** Notes in the run's evidence that a steer its receipt called queued never reached the child, and why. */
export function noteUndeliveredSteer(run: SteerEvidence, why: string, message: string): void {
  run.journal({ t: "event", name: STEER_UNDELIVERED, data: { message, why } });
  run.appendDiagnostic({ level: "warn", code: STEER_UNDELIVERED, message: `steer not delivered (${why}): ${message}` });
}

export class SteeringInbox {
  private readonly held: string[] = [];
  /** Delivered, but not yet in the session's own queue. */
  private readonly entering: string[] = [];
  private channel: SteerChannel | undefined;
  private closed = false;
  /** Closed because the child's harness takes no steers, not because the child ended. */
  takesNone = false;
  /** Messages sent that never reached a session: the child ended (or could take none) first. */
  readonly undelivered: string[] = [];

  /** Whether the child's session exists and takes messages directly. */
  get attached(): boolean {
    return this.channel !== undefined;
  }

  /** Every message sent that the child has not read yet, oldest first. */
  get unread(): readonly string[] {
    return [...this.held, ...this.entering, ...(this.channel?.unread() ?? [])];
  }

  /** Queue a message for the child. False once the child can no longer take one. */
  send(message: string): boolean {
    if (this.closed) return false;
    if (this.channel) this.deliver(this.channel, message);
    else this.held.push(message);
    return true;
  }

  /**
   * Queues a message, as `send` does, and says what became of it: on a channel that confirms, once
   * the channel has said whether it is on its way (it is not when the child has ended meanwhile).
   */
  async offer(message: string): Promise<SteerOffer> {
    const channel = this.channel;
    if (this.closed) return "ended";
    if (!channel?.confirms) return this.send(message) ? "queued" : "ended";
    const verdict = await this.deliver(channel, message);
    if (!verdict) return "queued";
    return "ended" in verdict ? "ended" : verdict;
  }

  /** The harness's session is ready: held messages go first, then every later one. */
  attach(channel: SteerChannel): void {
    this.channel = channel;
    for (const message of this.held.splice(0)) this.deliver(channel, message);
  }

  /**
   * The child's harness takes no steers (a worker runs it on stub or replay): closed, and says so,
   * so a steer taken for it is put back once as refused instead of at every look (running-watch.ts).
   */
  refuseAll(): void {
    this.takesNone = true;
    this.close();
  }

  /** The child settled, or cannot take steers: later sends are refused, and held ones are undelivered. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Taken into a model request that never answered, still in the session's queue (the child was
    // stopped before its next model request), or not in it yet: the session that ended never reads them.
    const unanswered = this.channel?.unanswered?.() ?? [];
    const queued = this.channel?.unread() ?? [];
    this.channel = undefined;
    this.undelivered.push(...this.held.splice(0), ...unanswered, ...queued, ...this.entering.splice(0));
  }

  private deliver(channel: SteerChannel, message: string): Promise<SteerVerdict | void> {
    this.entering.push(message);
    return channel.deliver(message).finally(() => {
      const index = this.entering.indexOf(message);
      if (index >= 0) this.entering.splice(index, 1);
    });
  }
}
