import { createHash } from "node:crypto";
import { FlowError } from "../../contract/errors.ts";
import { errorCode, lstatOrNull, readRange } from "../fsio.ts";

/**
 * A view document: the exact bytes a cursor sequence walks. Pages are byte ranges cut on UTF-8
 * character boundaries, so concatenating a sequence's pages reproduces the document exactly.
 * File-backed documents read only the page's bytes; nothing scales with the size of the evidence.
 */
export interface ViewDocument {
  size: number;
  /** Identity of the evidence behind the document when it was measured. */
  fingerprint: string;
  /** Whether growth at the end is the only change the document can see (append-only logs). */
  appendOnly: boolean;
  read(offset: number, length: number): Buffer;
  /** Bytes before the file data (`[` of a JSON array view); used to spot a cursor inside the suffix. */
  prefixBytes: number;
}

export function memoryDocument(text: string): ViewDocument {
  const buf = Buffer.from(text, "utf8");
  const fingerprint = `m:${createHash("sha256").update(buf).digest("base64url").slice(0, 16)}`;
  return { size: buf.length, fingerprint, appendOnly: false, prefixBytes: 0, read: (o, n) => buf.subarray(o, o + n) };
}

/**
 * A file, optionally wrapped in a constant prefix and suffix. `appendOnly` files are fingerprinted
 * by identity (inode and birth time) and size (growth is not a change); replaced files by identity,
 * size and mtime.
 * A missing file reads as empty, and so does anything in its place that pi-flow never writes there
 * (a link, a FIFO): it is not followed or opened. A page that cannot be read is run_unavailable,
 * naming no path.
 */
export function fileDocument(path: string, opts: { appendOnly: boolean; prefix?: string; suffix?: string }): ViewDocument {
  const prefix = Buffer.from(opts.prefix ?? "", "utf8");
  const suffix = Buffer.from(opts.suffix ?? "", "utf8");
  const stat = lstatOrNull(path);
  const dataBytes = stat?.isFile() ? stat.size : 0;
  // Inode numbers are reused at once after a delete; the birth time tells a recreated file apart.
  const identity = stat?.isFile() ? `${stat.ino}-${stat.birthtimeMs}` : "0";
  const fingerprint = opts.appendOnly ? `a:${identity}:${dataBytes}` : `r:${identity}:${dataBytes}:${stat?.mtimeMs ?? 0}`;
  const size = prefix.length + dataBytes + suffix.length;
  const read = (offset: number, length: number): Buffer => {
    const end = Math.min(size, offset + length);
    const parts: Buffer[] = [];
    const dataStart = prefix.length;
    const dataEnd = dataStart + dataBytes;
    if (offset < dataStart) parts.push(prefix.subarray(offset, Math.min(end, dataStart)));
    const from = Math.max(offset, dataStart);
    const to = Math.min(end, dataEnd);
    if (to > from) parts.push(readEvidenceRange(path, from - dataStart, to - from));
    if (end > dataEnd) parts.push(suffix.subarray(Math.max(0, offset - dataEnd), end - dataEnd));
    return parts.length === 1 && parts[0] ? parts[0] : Buffer.concat(parts);
  };
  return { size, fingerprint, appendOnly: opts.appendOnly, read, prefixBytes: prefix.length };
}

function readEvidenceRange(path: string, position: number, length: number): Buffer {
  try {
    return readRange(path, position, length);
  } catch (error) {
    throw new FlowError("run_unavailable", `The run's evidence cannot be read (${errorCode(error) ?? "error"}).`);
  }
}

const stale = (): FlowError => new FlowError("cursor_stale", "The evidence changed while paging. Restart without a cursor.");

/**
 * Would a cursor issued at `offset` against fingerprint `issued` still continue the same byte
 * sequence in `doc`? Appends to a log keep earlier pages valid, unless the earlier page already
 * served part of the closing suffix that the append has now moved.
 */
export function assertFresh(doc: ViewDocument, offset: number, issued: string): void {
  if (issued === doc.fingerprint) {
    // Unchanged evidence, so no cursor pi-flow issued can point past its end: restarting would not help.
    if (offset > doc.size) throw new FlowError("cursor_invalid", "Invalid cursor: it points past the end of the view.");
    return;
  }
  if (!doc.appendOnly || !issued.startsWith("a:") || !doc.fingerprint.startsWith("a:")) throw stale();
  const [, oldIno = "", oldSizeText = ""] = issued.split(":");
  const [, newIno = "", newSizeText = ""] = doc.fingerprint.split(":");
  const oldSize = Number(oldSizeText);
  const newSize = Number(newSizeText);
  if (oldIno !== "0" && oldIno !== newIno) throw stale(); // replaced or recreated
  if (!Number.isSafeInteger(oldSize) || newSize < oldSize) throw stale(); // truncated
  if (offset > doc.prefixBytes + oldSize) throw stale(); // already inside the old suffix
}

export interface Page {
  text: string;
  nextOffset: number;
  /** The page reached the end of the document as it is now. */
  atEnd: boolean;
}

const isContinuation = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80;

/** How many bytes the UTF-8 character that starts with `lead` takes. */
const characterBytes = (lead: number | undefined): number => (lead === undefined || lead < 0xc0 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4);

/** One page of at most `limitBytes` UTF-8 bytes starting at `offset`, never splitting a character. */
export function readPage(doc: ViewDocument, offset: number, limitBytes: number): Page {
  if (offset > doc.size) throw stale();
  const remaining = doc.size - offset;
  if (remaining === 0) return { text: "", nextOffset: offset, atEnd: true };
  const want = Math.min(limitBytes, remaining);
  // One byte of lookahead tells whether the cut lands on a character boundary.
  const buf = doc.read(offset, want < remaining ? want + 1 : want);
  if (isContinuation(buf[0])) throw new FlowError("cursor_invalid", "Invalid cursor: it does not point at a character boundary.");
  let cut = want;
  if (want < remaining) while (cut > 0 && isContinuation(buf[cut])) cut--;
  if (cut === 0) {
    const needs = characterBytes(buf[0]);
    throw new FlowError(
      "page_too_small",
      `limitBytes ${limitBytes} cannot hold the next character of this view (${needs} bytes): ask again with limitBytes ${needs} or more, and the same cursor.`,
    );
  }
  const nextOffset = offset + cut;
  return { text: buf.subarray(0, cut).toString("utf8"), nextOffset, atEnd: nextOffset >= doc.size };
}
