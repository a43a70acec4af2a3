// Worktree creation and removal write the repository's shared files (.git/worktrees, and for some
// git versions .git/config): two at once can fail on git's own lock. An apply or discard of a run's
// changes takes the same lock, so two of one run never both act on it (apply-runs.ts). All are
// serialized per repository: in this process by a promise queue, across processes by a lock file.
import { open, readFile, rm, stat } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { errorCode, ownerAlive, ownIdentity } from "../runs/index.ts";
import { processGlobal } from "../../runtime/process-global.ts";

const LOCK_NAME = "pi-flow-worktrees.lock";
/** A lock held longer than this by a process of another host is taken as abandoned. */
const FOREIGN_LOCK_MAX_AGE_MS = 10 * 60 * 1000;
const RETRY_MS = 25;

/** One queue per repository, shared by every copy of pi-flow in the process (runtime/process-global.ts). */
function queues(): Map<string, Promise<unknown>> {
  return processGlobal("pi-flow.worktree-queues", () => new Map<string, Promise<unknown>>());
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Whether the lock at `path` was left by a process that is gone (or is too old to trust). */
async function abandoned(path: string): Promise<boolean> {
  try {
    const owner = JSON.parse(await readFile(path, "utf8")) as { pid?: unknown; host?: unknown; boot?: unknown; start?: unknown };
    if (owner.host !== hostname()) return Date.now() - (await stat(path)).mtimeMs > FOREIGN_LOCK_MAX_AGE_MS;
    return !ownerAlive(owner);
  } catch {
    return false; // being written or just removed: look again
  }
}

async function acquireFile(path: string): Promise<void> {
  for (;;) {
    try {
      const handle = await open(path, "wx", 0o600);
      await handle.writeFile(JSON.stringify({ pid: process.pid, host: hostname(), ...ownIdentity() }));
      await handle.close();
      return;
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error;
    }
    if (await abandoned(path)) await rm(path, { force: true });
    else await pause(RETRY_MS);
  }
}

/** Runs `work` alone among pi-flow's worktree changes to the repository at `commonDir`. */
export function withRepositoryLock<T>(commonDir: string, work: () => Promise<T>): Promise<T> {
  const all = queues();
  const previous = all.get(commonDir) ?? Promise.resolve();
  const path = join(commonDir, LOCK_NAME);
  const next = previous.then(async () => {
    await acquireFile(path);
    try {
      return await work();
    } finally {
      await rm(path, { force: true });
    }
  });
  const tail = next.catch(() => undefined);
  all.set(commonDir, tail);
  void tail.then(() => {
    if (all.get(commonDir) === tail) all.delete(commonDir);
  });
  return next;
}
