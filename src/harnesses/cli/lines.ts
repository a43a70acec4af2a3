/**
 * Splits a child's stdout into lines as the bytes arrive, however the writes were cut. A line
 * longer than `maxLineBytes` is refused as soon as it is known to be too long, so a CLI that
 * writes without newlines cannot make the host buffer without bound. UTF-8 never has a newline
 * byte inside a character, so cutting at newline bytes never splits one.
 */
export class LineSplitter {
  private readonly maxLineBytes: number;
  private readonly onLine: (line: string) => void;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Set once a line was too long; nothing after it is read. */
  overflowed = false;

  constructor(maxLineBytes: number, onLine: (line: string) => void) {
    this.maxLineBytes = maxLineBytes;
    this.onLine = onLine;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (!this.overflowed) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline < 0) break;
      this.keep(chunk.subarray(start, newline));
      if (this.overflowed) return;
      this.emit();
      start = newline + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  /** The unfinished last line, if the stream ended without a newline. */
  end(): string | undefined {
    if (this.overflowed || this.pendingBytes === 0) return undefined;
    const rest = Buffer.concat(this.pending).toString("utf8");
    this.pending = [];
    this.pendingBytes = 0;
    return rest;
  }

  private keep(part: Buffer): void {
    if (this.overflowed || part.length === 0) return;
    this.pendingBytes += part.length;
    if (this.pendingBytes > this.maxLineBytes) {
      this.overflowed = true;
      this.pending = [];
      return;
    }
    // A copy, so a small tail does not keep a large chunk alive.
    this.pending.push(Buffer.from(part));
  }

  private emit(): void {
    let line = Buffer.concat(this.pending).toString("utf8");
    this.pending = [];
    this.pendingBytes = 0;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim().length > 0) this.onLine(line);
  }
}
