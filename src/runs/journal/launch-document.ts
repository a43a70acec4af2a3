import { readAt, readRange, withOpenFile } from "../fsio.ts";
import type { RunFiles } from "../home.ts";
import { parseLine, readLaunch } from "./journal-ends.ts";
import { memoryDocument, type ViewDocument } from "../read/paging.ts";

/**
 * The `launch` view: the launch details as compact JSON and a newline. A start line written with
 * `launchBytes` ends `…,"launchBytes":N,"launch":<N bytes>}\n`, so the view is that byte range of
 * the journal: found by reading the line's head, paged by reading the page, whatever the size of
 * the launch details. A start line without it (written by an earlier pi-flow) is parsed whole.
 */

/** The start line's fields before `launch` are small; a head this long holds them. */
const HEAD_BYTES = 64 * 1024;
const MARKER = Buffer.from(',"launchBytes":');
const LAUNCH_KEY = Buffer.from(',"launch":');

/** Where the launch value lies in the journal, if the start line says so and its head checks out. */
function launchRange(path: string, runId: string): { start: number; bytes: number; identity: string; mtime: number } | undefined {
  return withOpenFile(path, (fd, stats) => {
    const head = readAt(fd, 0, Math.min(HEAD_BYTES, stats.size));
    // A `"` inside a JSON string is always escaped, so the marker is a key; parsing the head up to
    // it proves it is the start line's own key, not one nested inside another field.
    const at = head.indexOf(MARKER);
    if (at < 0) return undefined;
    const digits = /^\d{1,15}/.exec(head.subarray(at + MARKER.length, at + MARKER.length + 16).toString("latin1"))?.[0];
    if (digits === undefined) return undefined;
    const keyAt = at + MARKER.length + digits.length;
    if (!head.subarray(keyAt, keyAt + LAUNCH_KEY.length).equals(LAUNCH_KEY)) return undefined;
    // The head up to the marker, closed, is the start line without its launch: checked as every journal line is.
    if (parseLine(`${head.subarray(0, at).toString("utf8")}}`, runId)?.t !== "start") return undefined;
    const start = keyAt + LAUNCH_KEY.length;
    const bytes = Number(digits);
    // The value must be followed by the line's closing brace and newline: a torn line is no launch.
    if (readAt(fd, start + bytes, 2).toString("latin1") !== "}\n") return undefined;
    return { start, bytes, identity: `${stats.ino}-${stats.birthtimeMs}`, mtime: stats.mtimeMs };
  });
}

/**
 * The launch view's document, or null when the launch details cannot be read. A live run's journal
 * grows while its launch is paged, so only its identity names the document; a settled run's
 * journal no longer changes, so its modification time is part of the name and a rewrite is seen.
 */
export function launchDocument(files: RunFiles, runId: string, live: boolean): ViewDocument | null {
  const range = launchRange(files.journal, runId);
  if (range) {
    const size = range.bytes + 1;
    return {
      size,
      fingerprint: `l:${range.identity}:${range.start}:${range.bytes}${live ? "" : `:${range.mtime}`}`,
      appendOnly: false,
      prefixBytes: 0,
      read: (offset, length) => {
        const end = Math.min(size, offset + length);
        const data = end > range.bytes ? range.bytes : end;
        const body = offset < data ? readRange(files.journal, range.start + offset, data - offset) : Buffer.alloc(0);
        return end > range.bytes ? Buffer.concat([body, Buffer.from("\n")]) : body;
      },
    };
  }
  const launch = readLaunch(files, runId);
  return launch ? memoryDocument(`${JSON.stringify(launch)}\n`) : null;
}
