import { randomBytes } from "node:crypto";
import { open as openAsync } from "node:fs/promises";
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  mkdirSync,
  lstatSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
  type BigIntStats,
  type Stats,
} from "node:fs";
import { dirname } from "node:path";

/** Files whose name starts like this are half-written replacements; readers and listings skip them. */
export const TMP_PREFIX = ".tmp-";

function fsyncDir(dir: string): void {
  // Makes a rename durable; not every platform allows opening a directory, and that is fine.
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* best effort */
  }
}

/**
 * Replace a file atomically: write a sibling temp file, flush it, rename over the target. A reader
 * sees the old or the new content, never a mix, even if the process dies in between. `durable`
 * also flushes data and directory, for the writes a power loss must not undo.
 */
export function atomicWriteFile(
  path: string,
  data: string | Uint8Array,
  opts: { durable: boolean; beforeRename?: () => void },
): void {
  const tmp = `${dirname(path)}/${TMP_PREFIX}${randomBytes(6).toString("hex")}`;
  const fd = openSync(tmp, "wx", 0o600); // created here: a link planted under its name is refused
  try {
    const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    let written = 0;
    while (written < buf.length) written += writeSync(fd, buf, written, buf.length - written);
    if (opts.durable) fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw error;
  }
  closeSync(fd);
  opts.beforeRename?.();
  try {
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
  if (opts.durable) fsyncDir(dirname(path));
}

/**
 * Write a file that is written once and never replaced (a run's launch details, its final value).
 * No temp file and rename: a reader never looks at it before the step that follows it (the final
 * value is trusted only once the terminal line after it is in the journal).
 */
export function writeNewFile(path: string, data: string): void {
  writeFileSync(path, data, { mode: 0o600 });
}

export function ensureDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
}

/**
 * An append-only file kept open by its single writer; whole buffers go out in one write call. A
 * `fresh` file is created here, exclusively (it must not exist yet), so it starts empty without a stat.
 */
export class AppendFile {
  readonly path: string;
  private fd: number | null;
  private bytes: number;

  constructor(path: string, opts: { fresh?: boolean } = {}) {
    this.path = path;
    this.fd = openSync(path, opts.fresh ? "ax" : "a", 0o600);
    this.bytes = opts.fresh ? 0 : fstatSync(this.fd).size;
  }

  get size(): number {
    return this.bytes;
  }

  append(text: string, flush: boolean): void {
    if (this.fd === null) throw new Error(`append after close: ${this.path}`);
    const buf = Buffer.from(text, "utf8");
    let written = 0;
    while (written < buf.length) written += writeSync(this.fd, buf, written, buf.length - written);
    this.bytes += buf.length;
    if (flush) fsyncSync(this.fd);
  }

  flush(): void {
    if (this.fd !== null) fsyncSync(this.fd);
  }

  /** The open file's metadata, with nanosecond times: what the journal cache stamps. */
  stat(): BigIntStats {
    if (this.fd === null) throw new Error(`stat after close: ${this.path}`);
    return fstatSync(this.fd, { bigint: true });
  }

  close(): void {
    const fd = this.release();
    if (fd !== null) closeSync(fd);
  }

  /** The open descriptor, given up: the caller closes it (null when already closed or released). */
  release(): number | null {
    const fd = this.fd;
    this.fd = null;
    return fd;
  }
}

export function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/**
 * How every read of a run's evidence opens it. pi-flow writes only regular files there, but a
 * child that can write in the Flow home, or a repository that ships one, could plant others: a
 * link is not followed (ELOOP), so it cannot hand a file outside the store to a reader, and a
 * FIFO does not block the open. `openEvidence` then refuses anything but a regular file.
 */
const EVIDENCE_READ = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/** The code of the error a planted file that is not a regular one is refused with. */
export const NOT_REGULAR = "ENOTREG";

function refuseIrregular(stats: Stats): void {
  if (!stats.isFile()) throw Object.assign(new Error("not a regular file"), { code: NOT_REGULAR });
}

/** A run's evidence file opened for reading, as EVIDENCE_READ says; the caller closes it. */
export function openEvidence(path: string): number {
  const fd = openSync(path, EVIDENCE_READ);
  try {
    refuseIrregular(fstatSync(fd));
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/** The whole text of a run's evidence file, opened as openEvidence does; throws what it throws. */
export function readEvidenceText(path: string): string {
  const fd = openEvidence(path);
  try {
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** readEvidenceText, without holding the event loop: for passes that run beside a session. */
export async function readEvidenceTextAsync(path: string): Promise<string> {
  const file = await openAsync(path, EVIDENCE_READ);
  try {
    refuseIrregular(await file.stat());
    return await file.readFile("utf8");
  } finally {
    await file.close();
  }
}

/** The evidence file's own stats (a link's, not its target's), or null when there is none. */
export function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Read `length` bytes at `position`: the cost of a page is the page, not the file. */
export function readRange(path: string, position: number, length: number): Buffer {
  const fd = openEvidence(path);
  try {
    return readAt(fd, position, length);
  } finally {
    closeSync(fd);
  }
}

/**
 * `read` over an evidence file opened for reading (openEvidence), with its stats, then closed: undefined when the file
 * cannot be opened or `read` throws (a missing or torn file is no answer, not an error).
 */
export function withOpenFile<T>(path: string, read: (fd: number, stats: Stats) => T): T | undefined {
  let fd: number;
  try {
    fd = openEvidence(path);
  } catch {
    return undefined;
  }
  try {
    return read(fd, fstatSync(fd));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Bytes read through readAt since the process started: what tests weigh a page's cost by. */
export const evidenceReads = { bytes: 0 };

/** Up to `length` bytes of an open file at `position` (fewer at its end). */
export function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  evidenceReads.bytes += got;
  return got === length ? buf : buf.subarray(0, got);
}

export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;
}
