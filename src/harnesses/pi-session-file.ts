import { closeSync, openSync, writeSync } from "node:fs";
import { parseSessionEntries, SessionManager, type FileEntry } from "@earendil-works/pi-coding-agent";
import { FlowError } from "../contract/errors.ts";
import { errorCode, PrintedSecretResults, readUserFile, redactedJson, redactValue } from "../runs/index.ts";

/** The most an earlier child's transcript may hold to be resumed: read whole, so bounded first. */
export const TRANSCRIPT_MAX_BYTES = 64 * 1024 * 1024;

/** One line of the file: an entry redacted as every durable record of a run is. */
const redactedLine = (entry: unknown): string => redactedJson(entry) ?? "null";

/**
 * The session a resumed child continues: the earlier child's entries, redacted (a file written
 * before transcripts were redacted is redacted now), under a new header that names it as parent.
 * It is held in memory and written by ChildSessionFile, like a new child's.
 */
export function resumedSessionManager(source: string, cwd: string): SessionManager {
  const text = readUserFile(source, { what: "The earlier child's Pi session", maxBytes: TRANSCRIPT_MAX_BYTES, code: "run_unavailable" });
  const entries = parseSessionEntries(text).filter((entry) => entry.type !== "session");
  if (entries.length === 0) throw new FlowError("run_unavailable", `The earlier child's Pi session ${source} has no entries: there is nothing to resume.`);
  const printed = new PrintedSecretResults();
  const redacted = entries.map((entry) => redactValue(printed.entry(entry)).value as FileEntry);
  return SessionManager.inMemory(cwd, { parentSession: source }, redacted);
}

/**
 * A pi child's session file, written by pi-flow from the child's in-memory Pi session, every
 * entry redacted (a command's result too, when the call's command printed a secret into it): the
 * file is evidence kept on disk beside the redacted journal. Pi would
 * open the file again for every message it appends, and on a busy disk file opens are most of
 * what a short child costs. This writes once the prompt is in the session (as Pi does, so a child
 * killed in its first turn keeps its prompt), at the end of each turn and when the child stops,
 * through one open file. The file is Pi's own format (the header, then one entry per line), so Pi
 * reads it back to resume the child; a child killed mid-turn resumes from its last whole turn.
 * Nothing is written until the conversation has a message.
 */
export class ChildSessionFile {
  private readonly manager: SessionManager;
  private readonly path: string;
  private fd: number | null = null;
  /** Entries written so far, the header not counted. */
  private written = 0;
  private failed = false;
  /** The calls written so far whose command prints a secret: their results, written later, lose it. */
  private readonly printed = new PrintedSecretResults();

  constructor(manager: SessionManager, path: string) {
    this.manager = manager;
    this.path = path;
  }

  /**
   * Append what the session gained since the last flush. A failed write is reported once, through
   * `onError`, and stops the file (a partial session is still one Pi can read back); the child goes on.
   */
  flush(onError: (message: string) => void): void {
    if (this.failed || this.manager.getEntryCount() === this.written) return;
    const entries = this.manager.getEntries();
    const lines: string[] = [];
    try {
      if (this.fd === null) {
        if (!entries.some((entry) => entry.type === "message")) return;
        this.fd = openSync(this.path, "wx", 0o600);
        lines.push(redactedLine(this.manager.getHeader()));
      }
      for (const entry of entries.slice(this.written)) lines.push(redactedLine(this.printed.entry(entry)));
      const buffer = Buffer.from(`${lines.join("\n")}\n`, "utf8");
      for (let done = 0; done < buffer.length; ) done += writeSync(this.fd, buffer, done);
      this.written = entries.length;
    } catch (error) {
      this.failed = true;
      onError(`The child's Pi session could not be saved (${errorCode(error) ?? "error"}); it cannot be resumed.`);
    }
  }

  /** Flush, then close the file. */
  close(onError: (message: string) => void): void {
    this.flush(onError);
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      closeSync(fd);
    } catch {
      /* written already; closing is best effort */
    }
  }
}
