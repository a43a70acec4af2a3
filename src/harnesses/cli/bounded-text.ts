import { redactText } from "../../runs/index.ts";

/** How far from a cut a blank is looked for; with none, this many characters beside the cut are dropped. */
const MAX_PIECE = 256;

/**
 * Keeps the start and the end of a stream that may be very long (a CLI's stderr): the start says
 * how it began, the end usually says why it stopped. What lies between is counted, not kept.
 *
 * What it returns is redacted, and redaction sees the kept text before anything is cut from it:
 * a secret cut in two would leave a piece no rule recognises (the tail of a key without its
 * prefix). So where the stream was cut, the word the cut went through is dropped too (up to the
 * nearest blank, else MAX_PIECE characters), and `lastLines` cuts the text once it is redacted.
 */
export class BoundedText {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  /**
   * The head and the tail as the chunks that came (copied, so a kept piece does not hold a large
   * chunk): joining them at every chunk cost a copy of the whole tail per chunk, so a CLI writing
   * stderr a byte at a time kept the host busy copying. The tail is cut back to its limit once it
   * holds twice that: each byte is copied a bounded number of times.
   */
  private headParts: Buffer[] = [];
  private headBytes = 0;
  private tailParts: Buffer[] = [];
  private tailBytes = 0;
  private dropped = 0;
  /** Whether the byte after the head, and the one before the tail, is blank: a cut there splits no word. */
  private headEndsWord = true;
  private headFull = false;
  private tailStartsWord = true;

  constructor(headLimit: number, tailLimit: number) {
    this.headLimit = headLimit;
    this.tailLimit = tailLimit;
  }

  push(chunk: Buffer): void {
    const room = this.headLimit - this.headBytes;
    if (room > 0) {
      const part = chunk.subarray(0, room);
      this.headParts.push(Buffer.from(part));
      this.headBytes += part.length;
      if (this.headBytes === this.headLimit) this.headParts = [Buffer.concat(this.headParts)]; // full: one buffer from now on
      chunk = chunk.subarray(room);
    }
    if (chunk.length === 0) return;
    if (!this.headFull) {
      // The first byte past the head, in this chunk or a later one.
      this.headFull = true;
      this.headEndsWord = isBlank(chunk[0]!);
    }
    this.tailParts.push(Buffer.from(chunk));
    this.tailBytes += chunk.length;
    if (this.tailBytes >= 2 * this.tailLimit) this.trimTail();
  }

  /** The tail as one buffer of at most tailLimit bytes; what is cut from its start is counted as dropped. */
  private trimTail(): Buffer {
    const joined = Buffer.concat(this.tailParts);
    const excess = Math.max(0, joined.length - this.tailLimit);
    if (excess > 0) this.tailStartsWord = isBlank(joined[excess - 1]!);
    this.dropped += excess;
    const tail = Buffer.from(joined.subarray(excess));
    this.tailParts = [tail];
    this.tailBytes = tail.length;
    return tail;
  }

  get empty(): boolean {
    return this.headBytes === 0;
  }

  /** The kept text, redacted; a cut is marked with how many bytes were left out. */
  text(): string {
    const headBuffer = Buffer.concat(this.headParts);
    const tailBuffer = this.trimTail();
    if (this.dropped === 0) return redactText(Buffer.concat([headBuffer, tailBuffer]).toString("utf8")).text;
    const head = this.headEndsWord ? headBuffer.toString("utf8") : withoutLastPiece(headBuffer.toString("utf8"));
    const tail = this.tailStartsWord ? tailBuffer.toString("utf8") : withoutFirstPiece(tailBuffer.toString("utf8"));
    return redactText(`${head}\n[… ${this.dropped} bytes left out …]\n${tail}`).text;
  }

  /** The last few lines, redacted, for an error message. */
  lastLines(maxChars: number): string {
    const all = this.text().trimEnd();
    return all.length <= maxChars ? all : `…${all.slice(all.length - maxChars)}`; // redacted already: a cut now hides nothing
  }
}

/** `text` without the piece of a word it ends in, where a cut went through: back to its last blank, else MAX_PIECE characters. */
export function withoutLastPiece(text: string): string {
  const end = text.slice(-(MAX_PIECE + 1));
  const blank = end.search(/\s\S*$/);
  return text.slice(0, blank === -1 ? Math.max(0, text.length - MAX_PIECE) : text.length - end.length + blank + 1);
}

/** `text` without the piece of a word it starts with, where a cut went through: up to its first blank, else MAX_PIECE characters. */
function withoutFirstPiece(text: string): string {
  const blank = text.slice(0, MAX_PIECE + 1).search(/\s/);
  return text.slice(blank === -1 ? MAX_PIECE : blank);
}

/** Space, tab, line feed, vertical tab, form feed or carriage return. */
const isBlank = (byte: number): boolean => byte === 0x20 || (byte >= 0x09 && byte <= 0x0d);
