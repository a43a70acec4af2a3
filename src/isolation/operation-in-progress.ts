// A repository part way through a merge, rebase, cherry-pick or revert: git's own next step (commit,
// --continue, --abort) rewrites the working tree. `git rebase --abort` resets it hard, so the
// changes an apply wrote then (whose ref apply has dropped) would be lost; a merge commit would go
// without them. An apply waits until the user has finished or aborted what git is doing.
import { existsSync } from "node:fs";
import { FlowError } from "../contract/errors.ts";
import { nameList } from "./change-record.ts";
import { git, nulFields, runGit } from "./git.ts";

/** What git keeps (in the working tree's own git folder) while each operation is under way, and how the user ends it. */
const OPERATIONS: readonly { path: string; what: string; end: string }[] = [
  { path: "rebase-merge", what: "a rebase", end: "git rebase --continue or git rebase --abort" },
  { path: "rebase-apply", what: "a rebase or git am", end: "git rebase --continue or --abort (git am --continue or --abort)" },
  { path: "MERGE_HEAD", what: "a merge", end: "commit it, or git merge --abort" },
  { path: "CHERRY_PICK_HEAD", what: "a cherry-pick", end: "git cherry-pick --continue or --abort" },
  { path: "REVERT_HEAD", what: "a revert", end: "git revert --continue or --abort" },
];

/** request_invalid naming the operation when the working tree at `root` is in the middle of one. */
export async function assertNoOperationInProgress(root: string, runId: string): Promise<void> {
  const paths = (await git(["rev-parse", "--path-format=absolute", ...OPERATIONS.flatMap(({ path }) => ["--git-path", path])], { cwd: root })).split("\n");
  const found = OPERATIONS.find((_, i) => paths[i] !== undefined && existsSync(paths[i]!));
  if (!found) return assertNoUnresolvedConflicts(root, runId);
  throw new FlowError(
    "request_invalid",
    `Run ${runId}'s changes are not applied while the repository at ${JSON.stringify(root)} is in the middle of ${found.what} (.git/${found.path}): what git does next rewrites the working tree. Finish it (${found.end}), then apply again. Nothing was applied.`,
  );
}

/** request_invalid naming the files when the index of the working tree at `root` holds unresolved conflicts. */
async function assertNoUnresolvedConflicts(root: string, runId: string): Promise<void> {
  const listed = await runGit(["ls-files", "-u", "-z"], { cwd: root });
  if (listed.code !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  // "<mode> <id> <stage>\t<path>", one line per stage of each conflicted path.
  const conflicted = [...new Set(nulFields(listed.stdout).map((line) => line.slice(line.indexOf("\t") + 1)))].sort();
  if (conflicted.length === 0) return;
  throw new FlowError(
    "request_invalid",
    `Run ${runId}'s changes are not applied while the index of the repository at ${JSON.stringify(root)} holds unresolved conflicts, in ${nameList(conflicted)} (left by a git stash pop, git checkout -m or git apply --3way that stopped on a conflict): resolving them with git checkout --ours/--theirs, git restore or git reset --merge rewrites those files from the index. Resolve them (edit, then git add; or git reset), then apply again. Nothing was applied.`,
  );
}
