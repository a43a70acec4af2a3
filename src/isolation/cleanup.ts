// Crash cleanup, at session start: a worktree whose owning process (on this host) is gone is
// removed, git forgets worktrees whose directory vanished, and a kept ref whose run no longer exists
// anywhere in the flow home (pruned by retention) is dropped, with the tree kept before an apply of it that did not finish. Worktrees of live processes, of this
// process and of other hosts are left alone, as retention leaves their runs alone.
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { ownerAlive, projectKey, readEvidenceText } from "../runs/index.ts";
import { flowHomeLine } from "./changes.ts";
import { baseRef } from "./held-base.ts";
import { runGit } from "./git.ts";
import { removeWorktreeFolderLinks } from "./git-folder-scan.ts";
import { patientWait, withRepositoryLock, type WaitOptions } from "./repository-lock.ts";
import { openRepository, type Repository } from "./repository.ts";
import { beforeApplyRef } from "./unfinished-apply.ts";
import { ownerFile, removeWorktree, worktreesDir } from "./worktree.ts";

export interface CleanupReport {
  removedWorktrees: string[];
  droppedRefs: string[];
}

const OWNER_SUFFIX = ".owner.json";

/** Whether the process that made the worktree of `runId` is gone (only decidable on this host). */
function ownerGone(dir: string, runId: string): boolean {
  try {
    const owner = JSON.parse(readEvidenceText(ownerFile(dir, runId))) as { pid?: unknown; host?: unknown; boot?: unknown; start?: unknown };
    // ownerAlive takes a live process with the owner's ID for another one when it runs in another boot or started at another time.
    return owner.host === hostname() && owner.pid !== process.pid && !ownerAlive(owner);
  } catch {
    return false; // being written: its owner is alive
  }
}

/** Whether a run folder of `runId` exists in any project and session of the flow home. */
function runExists(home: string, runId: string): boolean {
  const projects = join(home, "projects");
  const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
  return list(projects).some((project) => list(join(projects, project, "sessions")).some((session) => existsSync(join(projects, project, "sessions", session, "runs", runId))));
}

/** The refs pi-flow keeps per run: its changes, the user's tree before an apply that did not finish, and the base of a child not settled (held-base.ts). */
const RUN_REF_PREFIXES = ["refs/pi-flow/", `${beforeApplyRef("")}`, `${baseRef("")}`];

async function dropOrphanRefs(repo: Repository, home: string): Promise<string[]> {
  const refs = await runGit(["for-each-ref", "--format=%(refname)%00%(contents)%00", ...RUN_REF_PREFIXES.map((prefix) => prefix.slice(0, -1))], { cwd: repo.root });
  const dropped: string[] = [];
  const mine = flowHomeLine(home);
  for (const entry of refs.stdout.toString("utf8").split("\0\n")) {
    const [ref = "", message = ""] = entry.split("\0");
    const prefix = RUN_REF_PREFIXES.find((candidate) => ref.startsWith(candidate));
    if (!prefix) continue;
    // Kept by another flow home sharing this repository: its runs are not looked for here.
    const owner = message.split("\n").find((line) => line.startsWith("Pi-flow-home: "));
    if (owner !== undefined && owner !== mine) continue;
    const runId = ref.slice(prefix.length);
    if (runExists(home, runId)) continue;
    await runGit(["update-ref", "-d", ref], { cwd: repo.root });
    if (prefix === "refs/pi-flow/") dropped.push(runId);
  }
  return dropped;
}

/**
 * Cleans up after crashed hosts in the repository of `cwd`; nothing to do outside a repository.
 * Another process that hangs holding the repository lock makes it give up (run_unavailable naming
 * that process) once LOCK_PATIENCE_MS have passed: the next session start tries again.
 */
export async function cleanupIsolation(home: string, cwd: string, wait: WaitOptions = {}): Promise<CleanupReport> {
  // Nothing was ever isolated from this flow home: no git to run at a session's start.
  if (!existsSync(join(home, "worktrees"))) return { removedWorktrees: [], droppedRefs: [] };
  let repo: Repository;
  try {
    repo = await openRepository(cwd);
  } catch {
    return { removedWorktrees: [], droppedRefs: [] };
  }
  const dir = worktreesDir(home, repo.root);
  const owners = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(OWNER_SUFFIX)) : [];
  const removedWorktrees: string[] = [];
  for (const runId of owners.map((name) => name.slice(0, -OWNER_SUFFIX.length))) {
    // ".owner.json" or "..owner.json" would name the folder of every worktree, or the flow home's: never removed.
    if (runId === "" || runId === "." || runId === ".." || !ownerGone(dir, runId)) continue;
    // Where it was made, reached through no link a child put on the way (replaced-worktree.ts).
    const madeAt = join(realpathSync(home), "worktrees", projectKey(repo.root), runId);
    await removeWorktree(repo.commonDir, repo.root, { path: join(dir, runId), madeAt }, ownerFile(dir, runId), wait);
    removedWorktrees.push(runId);
  }
  await withRepositoryLock(repo.commonDir, async () => {
    await removeWorktreeFolderLinks(repo.commonDir); // prune deletes the files of a folder one leads to
    await runGit(["worktree", "prune"], { cwd: repo.root });
  }, patientWait("forgetting worktrees whose folder is gone", wait));
  return { removedWorktrees, droppedRefs: await dropOrphanRefs(repo, home) };
}
