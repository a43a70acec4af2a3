/**
 * Splits a child's stdout into lines as the bytes arrive, however the writes were cut. A line
 * longer than `maxLineBytes` is refused as soon as it is known to be too long, so a CLI that
 * writes without newlines cannot make the host buffer without bound. UTF-8 never has a newline
 * byte inside a character, so cutting at newline bytes never splits one.
 */
const REUSED_BYTES = 64 * 1024;

export class LineSplitter {
  private readonly maxLineBytes: number;
  private readonly onLine: (line: string) => void;
  /**
   * The line so far, in one buffer that doubles as it fills: a line written a byte at a time is a
   * copy per byte, not a Buffer object per byte (some 100 bytes of heap each, so a 32 MiB line
   * would have held gigabytes).
   */
  private pending = Buffer.alloc(0);
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
      // A whole line in one chunk is decoded from the chunk itself, with no copy.
      if (this.pendingBytes === 0) this.emit(chunk.subarray(start, newline));
      else {
        this.keep(chunk.subarray(start, newline));
        if (this.overflowed) return;
        this.emit(this.take());
      }
      start = newline + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  /** The unfinished last line, if the stream ended without a newline. */
  end(): string | undefined {
    if (this.overflowed || this.pendingBytes === 0) return undefined;
    return this.take().toString("utf8");
  }

  private keep(part: Buffer): void {
    if (this.overflowed || part.length === 0) return;
    const needed = this.pendingBytes + part.length;
    if (needed > this.maxLineBytes) {
      this.overflowed = true;
      this.pending = Buffer.alloc(0);
      this.pendingBytes = 0;
      return;
    }
    if (needed > this.pending.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.maxLineBytes, Math.max(needed, this.pending.length * 2, 4096)));
      this.pending.copy(grown, 0, 0, this.pendingBytes);
      this.pending = grown;
    }
    part.copy(this.pending, this.pendingBytes);
    this.pendingBytes = needed;
  }

  /**
   * The line kept so far, to decode before anything is kept again: a buffer up to 64 KiB is reused
   * for the next line, a longer one is let go with its line.
   */
  private take(): Buffer {
    const line = this.pending.subarray(0, this.pendingBytes);
    if (this.pending.length > REUSED_BYTES) this.pending = Buffer.alloc(0);
    this.pendingBytes = 0;
    return line;
  }

  private emit(bytes: Buffer): void {
    let line = bytes.toString("utf8");
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim().length > 0) this.onLine(line);
  }
}
