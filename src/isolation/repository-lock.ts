// Worktree creation and removal write the repository's shared files (.git/worktrees, and for some
// git versions .git/config): two at once can fail on git's own lock. An apply or discard of a run's
// changes takes the same lock, so two of one run never both act on it (apply-runs.ts). All are
// serialized per repository: in this process by a promise queue, across processes by a lock file.
// A live holder that hangs (a process stopped with Ctrl-Z, a git waiting on a prompt) is named to
// whoever waits: its process ID, host, what it holds the lock for and since when.
import { open, rm, stat } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { errorCode, ownerAlive, ownIdentity } from "../runs/index.ts";
import { processGlobal } from "../../runtime/process-global.ts";
import { readPlainFile } from "./plain-file.ts";

const LOCK_NAME = "pi-flow-worktrees.lock";
/** A lock held longer than this by a process of another host is taken as abandoned. */
const FOREIGN_LOCK_MAX_AGE_MS = 10 * 60 * 1000;
/**
 * A lock file that does not read as an owner is being written (its maker writes it at once after
 * making it) or was left by a process that died in between: taken as abandoned once this old.
 */
const UNREADABLE_LOCK_MAX_AGE_MS = 10 * 1000;
const RETRY_MS = 25;
/** How long a wait for another process's lock goes unremarked before the waiter is told who holds it. */
const NOTICE_MS = 2_000;
/**
 * How long pi-flow's own uses of the lock (making and removing a child's worktree, crash cleanup,
 * an apply or discard) wait for another live process that holds it before giving up with
 * run_unavailable naming it: a holder that hangs never hangs them too.
 */
export const LOCK_PATIENCE_MS = 30_000;

/** How a caller waits for the lock held by another process. */
export interface LockWait {
  /** What the lock is taken for ("applying run r-…"), named to anyone who waits for it. */
  purpose?: string;
  /**
   * Given up after this long (counted from the call, so waiters queued in this process all give up
   * together) with run_unavailable naming the holder; without it, the wait lasts as long as the holder does.
   */
  patienceMs?: number;
  /** Told once, after `noticeMs` (default 2 s) of waiting, who holds the lock. */
  onWaiting?: (holder: string) => void;
  noticeMs?: number;
  /** Stops the wait (a child cancelled while its worktree waits for the lock): rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** How a caller of pi-flow's worktree operations may wait (what the lock is for is the operation's to say). */
export type WaitOptions = Pick<LockWait, "patienceMs" | "onWaiting" | "noticeMs" | "signal">;

/** A wait of LOCK_PATIENCE_MS (unless `wait` says otherwise) for the lock, taken for `purpose`. */
export const patientWait = (purpose: string, wait: WaitOptions = {}): LockWait => ({ patienceMs: LOCK_PATIENCE_MS, ...wait, purpose });

interface LockOwner {
  pid?: unknown;
  host?: unknown;
  boot?: unknown;
  start?: unknown;
  since?: unknown;
  purpose?: unknown;
}

/** One queue per repository, shared by every copy of pi-flow in the process (runtime/process-global.ts). */
function queues(): Map<string, Promise<unknown>> {
  return processGlobal("pi-flow.worktree-queues", () => new Map<string, Promise<unknown>>());
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A lock file names one process: anything larger is not read. */
const OWNER_MAX_BYTES = 64 * 1024;

async function readOwner(path: string): Promise<LockOwner | undefined> {
  try {
    // Opened without waiting: a child's bash can make the lock file (in the shared git folder) a FIFO, and readFile would wait on it forever.
    const owner = JSON.parse((await readPlainFile(path, { noLinks: true, maxBytes: OWNER_MAX_BYTES }))?.toString("utf8") ?? "") as unknown;
    return typeof owner === "object" && owner !== null ? (owner as LockOwner) : undefined;
  } catch {
    return undefined; // being written, torn, or just removed
  }
}

/** Whether the lock at `path` was left by a process that is gone (or is too old to trust). */
async function abandoned(path: string, owner: LockOwner | undefined): Promise<boolean> {
  const age = async () => Date.now() - ((await stat(path).catch(() => undefined))?.mtimeMs ?? Date.now());
  if (!owner) return (await age()) > UNREADABLE_LOCK_MAX_AGE_MS;
  if (owner.host !== hostname()) return (await age()) > FOREIGN_LOCK_MAX_AGE_MS;
  return !ownerAlive(owner);
}

/** The holder of the lock at `path` in words: "pi-flow process 4242 on host h (applying run r-…), since 2026-…Z". */
async function describeHolder(path: string, owner: LockOwner | undefined): Promise<string> {
  // A lock written by an older pi-flow has no `since`: its file's time says the same.
  const since = typeof owner?.since === "string" ? owner.since : (await stat(path).catch(() => undefined))?.mtime.toISOString();
  const who = `pi-flow process ${typeof owner?.pid === "number" ? owner.pid : "(unknown)"} on host ${typeof owner?.host === "string" ? JSON.stringify(owner.host) : "(unknown)"}`;
  const what = typeof owner?.purpose === "string" ? ` (${owner.purpose})` : "";
  return `${who}${what}${since ? `, since ${since}` : ""}`;
}

const stopped = (signal: AbortSignal) =>
  signal.reason instanceof Error ? signal.reason : new Error("stopped while waiting for the repository's pi-flow lock");

async function acquireFile(path: string, wait: LockWait, started: number): Promise<void> {
  let told = false;
  for (;;) {
    if (wait.signal?.aborted) throw stopped(wait.signal);
    try {
      const handle = await open(path, "wx", 0o600);
      const owner = { pid: process.pid, host: hostname(), ...ownIdentity(), since: new Date().toISOString(), ...(wait.purpose ? { purpose: wait.purpose } : {}) };
      await handle.writeFile(JSON.stringify(owner));
      await handle.close();
      return;
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error;
    }
    const owner = await readOwner(path);
    if (await abandoned(path, owner)) {
      await rm(path, { force: true });
      continue;
    }
    const waited = Date.now() - started;
    if (!told && wait.onWaiting && owner && waited >= (wait.noticeMs ?? NOTICE_MS)) {
      told = true;
      wait.onWaiting(`Waiting for the repository's pi-flow lock, held by ${await describeHolder(path, owner)}.`);
    }
    if (wait.patienceMs !== undefined && waited >= wait.patienceMs) {
      throw new FlowError(
        "run_unavailable",
        `${wait.purpose ? `Not ${wait.purpose}: the` : "The"} repository's pi-flow lock (${path}) is held by ${await describeHolder(path, owner)}, still running; gave up after ${Math.round(waited / 1000)} s. Nothing was changed: try again once it lets go, or end that process if it hangs (its lock is then taken over).`,
      );
    }
    await pause(RETRY_MS);
  }
}

/** Resolves when `previous` (the earlier holders in this process) settles, or rejects at once when `signal` aborts. */
function untilTurnOrAbort(previous: Promise<unknown>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return previous.then(() => undefined);
  if (signal.aborted) return Promise.reject(stopped(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(stopped(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    void previous.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

/** Runs `work` alone among pi-flow's worktree changes to the repository at `commonDir`. */
export function withRepositoryLock<T>(commonDir: string, work: () => Promise<T>, wait: LockWait = {}): Promise<T> {
  const all = queues();
  const previous = all.get(commonDir) ?? Promise.resolve();
  const path = join(commonDir, LOCK_NAME);
  const asked = Date.now();
  const next = untilTurnOrAbort(previous, wait.signal).then(async () => {
    await acquireFile(path, wait, asked);
    try {
      return await work();
    } finally {
      await rm(path, { force: true });
    }
  });
  // A waiter that gave up before its turn never held the lock: the next one waits for the earlier holders.
  const tail = next.then(
    () => undefined,
    () => previous,
  );
  all.set(commonDir, tail);
  void tail.then(() => {
    if (all.get(commonDir) === tail) all.delete(commonDir);
  });
  return next;
}
