/**
 * The steering inbox of one child. A steer sent before the child's session exists is held here and
 * delivered, in order, once the harness attaches its session; later ones go straight through. Pi's
 * own queue then delivers each message after the child's active tool batch and before its next
 * model request: a steer never interrupts a tool.
 */
export type SteerDelivery = (message: string) => void;

export class SteeringInbox {
  private readonly held: string[] = [];
  private deliver: SteerDelivery | undefined;
  private closed = false;

  /** Whether the child's session exists and takes messages directly. */
  get attached(): boolean {
    return this.deliver !== undefined;
  }

  /** Queue a message for the child. False once the child can no longer take one. */
  send(message: string): boolean {
    if (this.closed) return false;
    if (this.deliver) this.deliver(message);
    else this.held.push(message);
    return true;
  }

  /** The harness's session is ready: held messages go first, then every later one. */
  attach(deliver: SteerDelivery): void {
    this.deliver = deliver;
    for (const message of this.held.splice(0)) deliver(message);
  }

  /** The child settled: later sends are refused. */
  close(): void {
    this.closed = true;
    this.deliver = undefined;
    this.held.length = 0;
  }
}
