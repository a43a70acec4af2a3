import type { SavedSession } from "./child-sessions.ts";
import type { Requeue } from "./folder-refusals.ts";
import type { RemoteChildRequest, RemoteChildResult } from "./remote-child.ts";

/**
 * A coordinator's way to run children (agent() calls and delegations) away from its process. The
 * local backend has none: children run on their harness in-process, as they always have.
 */
export interface FleetChildren {
  /** What `/flow doctor` and `flow help` call it. */
  readonly label: string;
  /**
   * Checks the database before a run launches: configuration_invalid when it cannot be used, or does
   * not answer within a bound (docs/scale.md); rejects with the signal's reason once it aborts.
   */
  ready(signal?: AbortSignal): Promise<void>;
  /**
   * Hands the child to whichever worker takes it and resolves with what it answered. `onTaken`
   * names the worker once one takes the child off the queue; `onRequeued` says why once the child is
   * back on the queue after a worker took it (`onTaken` then names the next). Aborting the signal
   * cancels the child wherever it runs; the promise then rejects.
   */
  run(request: RemoteChildRequest, signal: AbortSignal, onTaken: (worker: string) => void, onRequeued?: (requeue: Requeue) => void): Promise<RemoteChildResult>;
  /**
   * Queues a message for the child wherever it runs: the worker running it hands it to the child's
   * session. False, with nothing written, when the database says the child has ended (its answer is in).
   */
  steer(workflowId: string, message: string): Promise<boolean>;
  /**
   * Takes the steers still waiting for a child whose answer is in: no worker handed them to it (it had
   * ended, or its harness takes none). `note` is given them, oldest first, and their rows go only
   * once it has returned: a coordinator killed while noting them leaves them for the resume of its
   * run to note. Rejects, with nothing noted, when the database cannot be read; rows a failed delete
   * leaves are noted again by a later take.
   */
  takeUndeliveredSteers(workflowId: string, note: (messages: string[]) => void): Promise<void>;
  /**
   * The steers a running child has not read yet, as the database knows them (steers.ts
   * `unreadSteers`): what the bound on unread steers counts on the fleet. Nothing is taken.
   */
  unreadSteers(workflowId: string): Promise<string[]>;
  /**
   * Takes the Pi session a settled child's worker left in the database: reads it (none when nothing
   * is left) and hands it to `keep`, then deletes it there once `keep` has returned true (done with
   * it): a coordinator killed while writing it, or whose write failed, leaves it for the resume of
   * its run (or the sweep). Rejects when the database cannot be read; rows it could not delete stay
   * for the sweep.
   */
  takeSession(workflowId: string, keep: (saved: SavedSession | null) => boolean): Promise<void>;
  close(): Promise<void>;
}
