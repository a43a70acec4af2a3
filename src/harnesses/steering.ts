/**
 * The steering inbox of one child. A steer sent before the child's session exists is held here and
 * delivered, in order, once the harness attaches its session; later ones go straight through. The
 * session's queue then delivers every unread message after the child's active tool batch and
 * before its next model request, all in that one request: a steer never interrupts a tool.
 */
export interface SteerChannel {
  /** Queues one message in the child's session; settles once the session holds it (never rejects). */
  deliver(message: string): Promise<unknown>;
  /** Messages the session holds that the child's model has not read yet. */
  unread(): readonly string[];
}

export class SteeringInbox {
  private readonly held: string[] = [];
  /** Delivered, but not yet in the session's own queue. */
  private readonly entering: string[] = [];
  private channel: SteerChannel | undefined;
  private closed = false;

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

  /** The harness's session is ready: held messages go first, then every later one. */
  attach(channel: SteerChannel): void {
    this.channel = channel;
    for (const message of this.held.splice(0)) this.deliver(channel, message);
  }

  /** The child settled: later sends are refused. */
  close(): void {
    this.closed = true;
    this.channel = undefined;
    this.held.length = 0;
    this.entering.length = 0;
  }

  private deliver(channel: SteerChannel, message: string): void {
    this.entering.push(message);
    void channel.deliver(message).finally(() => {
      const index = this.entering.indexOf(message);
      if (index >= 0) this.entering.splice(index, 1);
    });
  }
}
