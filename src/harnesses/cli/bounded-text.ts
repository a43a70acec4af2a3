/**
 * Keeps the start and the end of a stream that may be very long (a CLI's stderr): the start says
 * how it began, the end usually says why it stopped. What lies between is counted, not kept.
 */
export class BoundedText {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private head = Buffer.alloc(0);
  private tail = Buffer.alloc(0);
  private dropped = 0;

  constructor(headLimit: number, tailLimit: number) {
    this.headLimit = headLimit;
    this.tailLimit = tailLimit;
  }

  push(chunk: Buffer): void {
    const room = this.headLimit - this.head.length;
    if (room > 0) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, room)]);
      chunk = chunk.subarray(room);
    }
    if (chunk.length === 0) return;
    const joined = Buffer.concat([this.tail, chunk]);
    const excess = Math.max(0, joined.length - this.tailLimit);
    this.dropped += excess;
    this.tail = Buffer.from(joined.subarray(excess));
  }

  get empty(): boolean {
    return this.head.length === 0;
  }

  /** The kept text; a cut is marked with how many bytes were left out. */
  text(): string {
    if (this.dropped === 0) return Buffer.concat([this.head, this.tail]).toString("utf8");
    return `${this.head.toString("utf8")}\n[… ${this.dropped} bytes left out …]\n${this.tail.toString("utf8")}`;
  }

  /** The last few lines, for an error message. */
  lastLines(maxChars: number): string {
    const all = this.text().trimEnd();
    return all.length <= maxChars ? all : `…${all.slice(all.length - maxChars)}`;
  }
}
