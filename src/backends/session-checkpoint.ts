/**
 * The worker's side of a pi child's checkpoints: the harness hands over its session's entries after
 * the prompt is in and after each whole turn; this redacts what is new and appends it to
 * pi_flow.child_sessions (child-sessions.ts), one write at a time, in order, with the steers handed
 * to the child that no turn has read yet (the worker also saves when it hands one over).
 *
 * A checkpoint never fails the child: a write that fails is reported once as a diagnostic and
 * tried again with the next checkpoint. What is stored is bounded as a local session file is read
 * (TRANSCRIPT_MAX_BYTES): a session past it is no longer checkpointed, and a takeover continues
 * from the last turn that fit.
 */
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { continuedSession, TRANSCRIPT_MAX_BYTES } from "../harnesses/index.ts";
import { errorCode, PrintedSecretResults, redactedJson } from "../runs/index.ts";
import { appendSessionEntries, deleteSavedSession, type SavedSession } from "./child-sessions.ts";
import type { RemoteChildResult, StoredSession } from "./remote-child.ts";
import type { Pool } from "pg";

export interface SessionCheckpoints {
  /** What an earlier worker saved of this child, to continue; none when it starts afresh. */
  saved: SavedSession | null;
  /**
   * Saves the session's entries (a whole turn, or the prompt) with the steers it has not read yet;
   * never throws, and returns at once (the write goes on behind).
   */
  save(entries: readonly SessionEntry[]): void;
  /**
   * The worker handed this steer to the child: saved beside the session (until a saved turn holds
   * it), so that a takeover hands it over again; like `save`, never throws nor waits. `seq`: its row
   * in `pi_flow.steers`, kept there (taken) until the write that saves it deletes it.
   */
  handed(message: string, seq: string): void;
  /** Resolves once every checkpoint asked for so far is written or has failed. */
  drain(): Promise<void>;
  /** After `drain`: whether the database holds the whole session as last saved (how many entries), or why not. */
  stored(): StoredSession;
  /**
   * Saves no later turn: the child is about to be stopped to go back on the queue, and what its
   * stop adds (a tool call cut off as "aborted", an answer cut short) is not a turn to continue from.
   * Steers handed to it are still saved beside the turns saved.
   */
  freeze(): void;
}

export interface CheckpointPlace {
  pool: Pool;
  workflowId: string;
  worker: string;
  saved: SavedSession | null;
  /** The steers handed to the child that it has not read yet (its SteeringInbox's unread). */
  unread(): readonly string[];
  /** Where a failed or bounded checkpoint is told, once each; must not throw. */
  onDiagnostic(message: string): void;
}

/** Why a checkpoint was not written when the database says another worker runs the child now. */
const TAKEN = "another worker runs the child now";

/**
 * The session's entries as of one save, with the steers unread then and how many steers had been
 * handed over by then: the unread steers that go with these entries are `unread` and every steer
 * handed over since (read by a later turn or not, no saved turn holds them).
 */
interface Snapshot {
  entries: readonly SessionEntry[];
  unread: readonly string[];
  handedAt: number;
}

export function sessionCheckpoints(place: CheckpointPlace, maxBytes = TRANSCRIPT_MAX_BYTES): SessionCheckpoints {
  // Entries already in the database: a continued session's saved ones are there from the start.
  let stored = place.saved?.entries.length ?? 0;
  let bytes = (place.saved?.entries ?? []).reduce((sum, entry) => sum + Buffer.byteLength(JSON.stringify(entry), "utf8"), 0);
  let full = false;
  let failing: string | undefined;
  let writing: Promise<void> = Promise.resolve();
  /** Every steer handed to the child since this worker took it, in order. */
  const handed: string[] = [];
  /** The rows in `pi_flow.steers` of steers handed over that no write has saved yet: the next write deletes them. */
  let unsavedSeqs: string[] = [];
  let latest: Snapshot = { entries: place.saved?.entries ?? [], unread: place.saved?.steers ?? [], handedAt: 0 };
  // A result is saved a turn after its call, or by a worker that took the child over: the calls
  // whose command prints a secret are remembered from the saved session on (PrintedSecretResults).
  const printed = new PrintedSecretResults();
  for (const entry of place.saved?.entries ?? []) printed.entry(entry);
  /** The snapshot whose entries the database holds, and the unread steers written beside them. */
  let storedSnapshot = latest;
  let unreadSaved: readonly string[] = place.saved?.steers ?? [];
  let frozen = false;
  const unreadOf = (snapshot: Snapshot) => [...snapshot.unread, ...handed.slice(snapshot.handedAt)];
  const refused = (why: string) => {
    if (failing === undefined) place.onDiagnostic(`A checkpoint of the child's Pi session could not be written (${why}); it is tried again after the next turn.`);
    failing = why;
  };
  const write = (snapshot: Snapshot) => async () => {
    let lines = full ? [] : snapshot.entries.slice(stored).map((entry) => redactedJson(printed.entry(entry)) ?? "null");
    const size = lines.reduce((sum, line) => sum + Buffer.byteLength(line, "utf8"), 0);
    if (bytes + size > maxBytes) {
      full = true;
      lines = [];
      place.onDiagnostic(`The child's Pi session passed ${maxBytes} bytes and is no longer checkpointed: a worker that takes it over continues from its last turn saved.`);
    }
    // The entries the database holds after this write, and so the steers unread as of them. Past
    // the bound no turn is saved, and a takeover loses the later turns: the steers they read go with them.
    const target = lines.length > 0 || full || stored >= snapshot.entries.length ? snapshot : storedSnapshot;
    const unread = unreadOf(target);
    const seqs = unsavedSeqs;
    if (lines.length === 0 && seqs.length === 0 && JSON.stringify(unread) === JSON.stringify(unreadSaved)) {
      storedSnapshot = target;
      return;
    }
    try {
      if (!(await appendSessionEntries(place.pool, place.workflowId, place.worker, stored, lines, unread, seqs))) return refused(TAKEN);
      unsavedSeqs = unsavedSeqs.filter((seq) => !seqs.includes(seq));
      stored += lines.length;
      bytes += lines.length > 0 ? size : 0;
      storedSnapshot = target;
      unreadSaved = unread;
      failing = undefined;
    } catch (error) {
      refused(errorCode(error) ?? "error");
    }
  };
  return {
    saved: place.saved,
    save(entries) {
      if (frozen) return;
      latest = { entries: [...entries], unread: [...place.unread()], handedAt: handed.length };
      writing = writing.then(write(latest));
    },
    handed(message, seq) {
      handed.push(message);
      unsavedSeqs = [...unsavedSeqs, seq];
      writing = writing.then(write(latest));
    },
    drain: () => writing,
    stored() {
      if (full) return { unsaved: `it passed ${maxBytes} bytes, past which it is no longer checkpointed` };
      if (failing !== undefined) return { unsaved: `its last checkpoint could not be written (${failing})` };
      if (stored < latest.entries.length) return { unsaved: "its last checkpoint was not written" };
      return { entries: stored };
    },
    freeze() {
      frozen = true;
    },
  };
}

/**
 * What a child's evidence says when a worker continues another's saved session, e.g. `continued on
 * worker w2 from turn 3 (taken over from w1)`; none when nothing whole was saved (it starts afresh).
 */
export function takeoverNote(saved: SavedSession, worker: string): string | null {
  const continued = continuedSession(saved.entries, undefined);
  if (!continued) return null;
  const from = `(taken over from ${saved.worker})`;
  return continued.answered
    ? `answered on worker ${worker} with the final answer its Pi session had saved ${from}`
    : `continued on worker ${worker} from turn ${continued.usage.turns + 1} ${from}`;
}

/**
 * A settled pi child's checkpointed session stays in the database for the coordinator, which copies
 * it into the child's run and deletes it (kept-session.ts) when the answer arrives; the answer says
 * how many entries to expect. A session not whole there, or of a cancelled child (whose answer DBOS
 * does not record), goes now (a sweep deletes it if this fails).
 */
export async function leaveSession(pool: Pool, workflowId: string, worker: string, checkpoints: SessionCheckpoints, result: RemoteChildResult, signal: AbortSignal): Promise<RemoteChildResult> {
  await checkpoints.drain();
  const session = signal.aborted ? { unsaved: "the child was cancelled" } : checkpoints.stored();
  if ("unsaved" in session) await deleteSavedSession(pool, workflowId, worker).catch(() => undefined);
  return { ...result, session };
}
