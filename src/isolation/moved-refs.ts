// A worktree shares the repository's branches and tags: a child that checks out one of the user's
// branches and commits, or runs `git update-ref refs/heads/main <sha>` or `git branch -f feature`,
// moves the user's branch (their checked-out one too, whose checkout then no longer matches its
// HEAD). The user's own commits during the run move their branches as well, so only a branch or tag
// whose new tip is a commit the child made (one its worktree's HEAD held, per its reflog, that no
// ref held when it began) is taken for the child's: it is put back where it was, and the child's tip
// is kept on refs/pi-flow-moved/<runId>/… (docs/isolation.md).
import { readPlainFile } from "./plain-file.ts";
import { join } from "node:path";
import { git, runGit, type PinnedWorktree } from "./git.ts";

/** A ref's own object (an annotated tag's object) and the commit it leads to. */
export interface RefTip {
  object: string;
  commit: string;
}

/** Each branch's and tag's tip, by ref name. */
export type RefTips = ReadonlyMap<string, RefTip>;

export async function refTips(root: string): Promise<RefTips> {
  const listed = await runGit(["for-each-ref", "--format=%(objectname) %(*objectname) %(refname)", "refs/heads", "refs/tags"], { cwd: root });
  if (listed.code !== 0) throw new Error(`git for-each-ref failed: ${listed.stderr}`);
  const tips = new Map<string, RefTip>();
  // One a line: a ref's name holds no line break (git check-ref-format).
  for (const line of listed.stdout.toString("utf8").split("\n")) {
    const match = /^([0-9a-f]+) ([0-9a-f]*) (.+)$/.exec(line);
    if (match) tips.set(match[3]!, { object: match[1]!, commit: match[2] || match[1]! });
  }
  return tips;
}

export interface MovedRef {
  ref: string;
  /** Its tip before the child ran, where it is put back. */
  from: string;
  /** The child's commit it held. */
  to: string;
  /** Where the child's tip is kept. */
  keptOn: string;
  /** False when it moved again meanwhile (git refused to put it back): left as it is. */
  restored: boolean;
}

/**
 * The branches and tags of `before` that are gone now, with the commit each held: a branch's reflog
 * goes with it, so this is what tells a deleted branch's commits (nothing says whether the child or
 * the user deleted it, so nothing is put back).
 */
export async function deletedRefs(root: string, before: RefTips): Promise<{ ref: string; held: string }[]> {
  const now = await refTips(root);
  return [...before].filter(([ref]) => !now.has(ref)).map(([ref, tip]) => ({ ref, held: tip.object }));
}

export const movedRefKeep = (runId: string, ref: string): string => `refs/pi-flow-moved/${runId}/${ref.slice("refs/".length)}`;

/**
 * The most of the child's HEAD reflog read: its bash can grow the file without bound (a pi-flow
 * host reading gigabytes at settle), and its latest lines, the last that is read, are those that
 * name the commits it made last.
 */
const REFLOG_TAIL_BYTES = 8 * 1024 * 1024;

/** The reflog's last REFLOG_TAIL_BYTES, from its first whole line; empty when there is none. */
async function reflogTail(path: string): Promise<string> {
  // Opened without waiting: a process the child left running may have made it a FIFO (plain-file.ts).
  const tail = await readPlainFile(path, { tailBytes: REFLOG_TAIL_BYTES });
  if (tail === null) return "";
  const text = tail.toString("utf8");
  return tail.length < REFLOG_TAIL_BYTES ? text : text.slice(text.indexOf("\n") + 1);
}

/** The commits the child's worktree HEAD held (its reflog's latest lines, and HEAD now). */
export async function headsHeld(worktree: PinnedWorktree): Promise<string[]> {
  const log = await reflogTail(join(worktree.gitDir, "logs", "HEAD"));
  const held = log.split("\n").map((line) => line.split(" ")[1] ?? "").filter((sha) => /^[0-9a-f]{40,64}$/.test(sha));
  const head = await runGit(["rev-parse", "--verify", "--quiet", "HEAD"], { cwd: worktree.path, worktree });
  if (head.code === 0) held.push(head.stdout.toString("utf8").trim());
  return [...new Set(held)];
}

/** The commits the child made: reachable from what its HEAD held, not from the base nor any ref as it began. */
async function childCommits(root: string, worktree: PinnedWorktree, base: string, before: RefTips): Promise<Set<string>> {
  const held = await headsHeld(worktree);
  if (held.length === 0) return new Set();
  const excluded = new Set([base, ...[...before.values()].map((tip) => tip.commit)]);
  const input = [...held, ...[...excluded].map((commit) => `^${commit}`)].join("\n") + "\n";
  // --ignore-missing: a line the child wrote into its reflog that names no commit is no commit it made.
  const listed = await git(["rev-list", "--ignore-missing", "--stdin"], { cwd: root, input });
  return new Set(listed.split("\n").filter((sha) => sha !== ""));
}

/**
 * The branches and tags that held a tip before the child ran (`before`) and now hold a commit the
 * child made: each is put back (only if it still holds that commit) with the child's tip kept.
 */
export async function restoreMovedRefs(root: string, runId: string, before: RefTips, base: string, worktree: PinnedWorktree): Promise<MovedRef[]> {
  const now = await refTips(root);
  const movedTo = [...before].filter(([ref, tip]) => now.has(ref) && now.get(ref)!.object !== tip.object);
  if (movedTo.length === 0) return [];
  const made = await childCommits(root, worktree, base, before);
  const moved: MovedRef[] = [];
  for (const [ref, from] of movedTo) {
    const to = now.get(ref)!;
    if (!made.has(to.commit)) continue; // the user's own commit, reset or fetch
    const keptOn = movedRefKeep(runId, ref);
    await git(["update-ref", keptOn, to.object], { cwd: root });
    // Only from the child's tip: a ref the user moved again since stays theirs.
    const restored = (await runGit(["update-ref", "-m", `pi-flow: put back where it was before run ${runId}`, ref, from.object, to.object], { cwd: root })).code === 0;
    moved.push({ ref, from: from.object, to: to.commit, keptOn, restored });
  }
  return moved;
}
