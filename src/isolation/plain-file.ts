// Reading a file a child can replace at any time. A check by path (lstat says a file) followed by
// a read by path (readFile) leaves a window: a process the child left running can put a FIFO
// there in between, and open() then waits for a writer forever (not git, so no time limit ends
// it, and a thread of Node's pool is held for good). So the file is opened first, without waiting
// (O_NONBLOCK: a FIFO opens at once), and checked and read through that one descriptor.
import { constants } from "node:fs";
import { open } from "node:fs/promises";

export interface PlainRead {
  /** A link is not followed (null), rather than read through. */
  noLinks?: boolean;
  /** Only the last this many bytes are read. */
  tailBytes?: number;
  /** A larger file is not read (null): a child can grow one without bound. */
  maxBytes?: number;
}

/** The bytes of the plain file at `path`; null when there is none (absent, a FIFO, socket, device or folder, a link when `noLinks`, or one over `maxBytes`). */
export async function readPlainFile(path: string, { noLinks = false, tailBytes, maxBytes = Number.POSITIVE_INFINITY }: PlainRead = {}): Promise<Buffer | null> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | (noLinks ? constants.O_NOFOLLOW : 0)).catch(() => null);
  if (handle === null) return null;
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > maxBytes) return null;
    const from = tailBytes === undefined ? 0 : Math.max(0, info.size - tailBytes);
    const buffer = Buffer.alloc(info.size - from);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, from);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
