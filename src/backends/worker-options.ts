/**
 * What `flow worker` (command-line/worker.ts) gives the dbos backend's worker, and what it gets
 * back: the worker calls these as its children start, settle, are refused or taken over.
 */
import type { SteeringInbox } from "../harnesses/index.ts";
import type { RemoteChildRequest, RemoteChildResult } from "./remote-child.ts";
import type { SessionCheckpoints } from "./session-checkpoint.ts";

export interface WorkerOptions {
  databaseUrl: string;
  /** The DBOS executor ID: a worker restarted under the same name recovers what it was running. */
  name: string;
  concurrency: number;
  /**
   * `steering` takes the steers the coordinator sends this child through the database; `sessions`
   * holds what an earlier worker saved of its Pi session, and where this worker checkpoints it.
   */
  run(request: RemoteChildRequest, signal: AbortSignal, steering: SteeringInbox, sessions: WorkerChildSession): Promise<RemoteChildResult>;
  onStarted(request: RemoteChildRequest): void;
  /** Whether the child's folder does not exist in this worker's checkout: it is then refused here (folder-refusals.ts). */
  folderMissing(request: RemoteChildRequest): boolean;
  /** A child refused here (its folder is missing) went back on the queue, for another worker. */
  onRefused(request: RemoteChildRequest): void;
  /** A steer for a child this worker runs was handed to it. */
  onSteered(workflowId: string): void;
  /**
   * Steers the child had not read that could be neither saved nor put back (the database refused
   * them): no worker or coordinator will see them again, so this is the last word on them.
   */
  onSteersLost(workflowId: string, messages: readonly string[], why: string): void;
  onSettled(request: RemoteChildRequest, result: RemoteChildResult): void;
  /**
   * The child failed here without an answer of its harness: its workflow's input names another
   * workflow, or the database held one of its queries past its statement_timeout. `workflowId` is
   * the DBOS workflow's own ID.
   */
  onFailed(workflowId: string, runId: string, message: string): void;
  /** The sweep put a silent worker's unfinished children back on the queue. */
  onTakeover(workflowIds: readonly string[]): void;
  /** The sweep cancelled delegations whose coordinator has been silent for `seconds` (orphan-delegations.ts). */
  onOrphansCancelled(workflowIds: readonly string[], seconds: number): void;
  /**
   * Children that ended here but whose end DBOS could not record (the database cancelled its write
   * at the statement_timeout): put back on the queue, so a worker runs them again from their saved
   * step or session instead of their coordinators waiting on them forever.
   */
  onRequeued(workflowIds: readonly string[]): void;
  /**
   * Another `flow worker` of this name took it while this one was not heard from (a network split,
   * a stopped process): two of one name would run each other's children again, so this one must
   * stop. Its `stop` then hands back nothing (the children under the name are the other's now) and
   * fails saying why.
   */
  onNameLost(): void;
  /** A worker of this name was heard from in the last `seconds`: this one waits to see whether it is alive, that long at most. */
  onNameHeld(seconds: number): void;
  /** How often the sweep runs (SWEEP_MS unless given: `PI_FLOW_WORKER_SWEEP_MS`, worker.ts). */
  sweepMs?: number;
}

/** A child's Pi session in the database (child-sessions.ts), for a harness that keeps one. */
export interface WorkerChildSession {
  /**
   * Reads what an earlier worker saved (none when it cannot be read now: the child then starts
   * afresh rather than waiting) and starts checkpointing; failures are told through `onDiagnostic`.
   */
  open(onDiagnostic: (message: string) => void): Promise<SessionCheckpoints>;
}

export interface RunningWorker {
  /** Children this worker is running now. */
  running(): number;
  stop(): Promise<void>;
}
