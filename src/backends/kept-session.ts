/**
 * The coordinator's copy of the Pi session of a pi child a worker ran. The worker leaves the
 * child's checkpointed session in pi_flow.child_sessions when it answers, and says how many entries
 * it left (remote-child.ts `session`); the coordinator takes them and writes them into the child's
 * run as `session.jsonl`, the file a local pi child's harness writes, in the same form (Pi's header,
 * then one redacted entry per line), and only then deletes the rows: a coordinator killed before, or
 * whose write failed, leaves them for the run's resume (or the sweep). A later `resume` of the run
 * then continues it on the coordinator as it would a local child's.
 *
 * A session that cannot be kept (the worker saved none, or not all of it, or the database or the
 * disk refused) is said once, why, in the run's diagnostics (code `session_not_kept`), which a
 * refused resume quotes. It never fails the child: its answer stands.
 */
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { ChildSessionFile } from "../harnesses/index.ts";
import { errorCode } from "../runs/index.ts";
import { FlowError } from "../contract/errors.ts";
import type { SavedSession } from "./child-sessions.ts";
import type { FleetChildren } from "./fleet.ts";
import type { StoredSession } from "./remote-child.ts";

/** The diagnostic code of a worker child whose Pi session the coordinator could not keep. */
export const SESSION_NOT_KEPT = "session_not_kept";

export interface KeptSessionPlace {
  workflowId: string;
  worker: string;
  /** Where the pi harness keeps the child's session in its run (resume-source.ts `childSessionFile`). */
  file: string;
  /** The child's folder on the coordinator: the session's header names it, as a local child's does. */
  cwd: string;
  /** Told once, with why, when nothing is kept; must not throw. */
  notKept(reason: string): void;
  /** How long the database may take to hand the session over; the child's settle waits no longer. */
  takeMs?: number;
}

/** A database that does not answer (a network split, no reset) must not hold the child's settle for TCP's quarter hour. */
const TAKE_MS = 30_000;

/**
 * Takes the session's rows and hands them to `keep` within `ms`; why not, when the database does not
 * answer in time or cannot be read. Past `ms`, `keep` is told the rows came late (it writes nothing, and they stay).
 */
async function takeWithin(fleet: FleetChildren, workflowId: string, ms: number, keep: (saved: SavedSession | null, late: boolean) => boolean): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  const lateWhy = new Promise<string>((resolve) => (timer = setTimeout(() => {
    late = true;
    resolve(`the database did not answer within ${ms / 1000} s`);
  }, ms)));
  try {
    return await Promise.race([fleet.takeSession(workflowId, (saved) => keep(saved, late)).then(() => undefined), lateWhy]);
  } catch (error) {
    if (error instanceof FlowError) return error.message; // a bound pi-flow keeps, which says itself
    return `the database could not be read: ${errorCode(error) ?? (error instanceof Error ? error.message : String(error))}`;
  } finally {
    clearTimeout(timer);
  }
}

/** `its Pi session was not kept from worker w1 (why)`: the diagnostic a refused resume quotes. */
export const notKeptMessage = (worker: string | undefined, why: string): string =>
  `its Pi session was not kept${worker === undefined ? "" : ` from worker ${worker}`} (${why})`;

export async function keepWorkerSession(fleet: FleetChildren, place: KeptSessionPlace, stored: StoredSession | undefined): Promise<void> {
  const notKept = (why: string) => place.notKept(notKeptMessage(place.worker, why));
  if (stored === undefined) return notKept("its worker checkpointed none: it answered on the stub or replay harness, or could not start the child");
  if ("unsaved" in stored) return notKept(stored.unsaved);
  let why: string | undefined;
  // True once the rows are no longer needed: written into the run, or never to be whole.
  let handed = false;
  const keep = (saved: SavedSession | null, late: boolean): boolean => {
    handed = true;
    if (late) return false;
    const entries = saved?.entries ?? [];
    if (entries.length !== stored.entries) return (why = `the database held ${entries.length} of its ${stored.entries} entries`), true;
    if (!entries.some((entry) => entry.type === "message")) return (why = "it holds no message"), true;
    const file = new ChildSessionFile(SessionManager.inMemory(place.cwd, undefined, entries), place.file);
    file.close(() => (why = "it could not be written into the run"));
    return why === undefined; // a write that failed leaves the rows for a resume to try again
  };
  why = (await takeWithin(fleet, place.workflowId, place.takeMs ?? TAKE_MS, keep)) ?? why;
  if (!handed && why === undefined) keep(null, false); // a take that found no rows to hand over
  if (why !== undefined) notKept(why);
}
