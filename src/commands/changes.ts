// `/flow apply|discard <runId>...`: a person lands or drops worktree runs' kept changes. Apply is
// the one step that touches their working tree, so it shows what would change and asks first.
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { changeRuns, checkChangeRuns, formatChangeAnswers, keptChangeFiles, keptReviewLines, reviewWarning, unfinishedApplyFiles, type ChangeAction } from "../isolation/apply-runs.ts";
import { nameList } from "../isolation/change-record.ts";
import type { RunStore } from "../runs/index.ts";

type Print = (title: string, lines: string[]) => void;

/** A run's line (its counts and the files it changes, as git lists them, every name made printable), and its line of files to review, if any. */
async function summary(store: RunStore, runId: string): Promise<{ line: string; review?: string }> {
  const { changes } = store.view(runId);
  if (!changes) return { line: `${runId}: no changes kept.` };
  const unfinished = unfinishedApplyFiles(store, runId);
  if (unfinished) return { line: `${runId}: its previous apply did not finish; the working tree may hold some of its changes and not others: ${nameList(unfinished)}` };
  const line = `${runId}: ${changes.files} file(s), +${changes.insertions} -${changes.deletions}: ${nameList(await keptChangeFiles(store, runId))}`;
  // Files that make the user's tools run code later are named again, on a line of their own, before the person is asked.
  const review = await keptReviewLines(store, runId);
  return review.length > 0 ? { line, review: reviewWarning(runId, review) } : { line };
}

export async function changesCommand(ctx: ExtensionCommandContext, store: RunStore, action: ChangeAction, runIds: string[], print: Print): Promise<void> {
  const title = `/flow ${action}`;
  if (runIds.length === 0) return print(title, [`Give the run IDs: /flow ${action} <runId>...`]);
  const summaries = await Promise.all(runIds.map((runId) => summary(store, runId)));
  // Every run's files to review come last, just above Yes/No: a question taller than the terminal
  // scrolls its top away, and another run's long list of files must not carry a warning with it.
  const lines = [...summaries.map(({ line }) => line), ...summaries.flatMap(({ review }) => (review ? [review] : []))];
  if (action === "apply") {
    if (!ctx.hasUI) return print(title, [...lines, "Applying needs a confirmation, and this session has no UI to ask: use flow runs apply in a shell."]);
    // A run that cannot be applied (unfinished, its repository mid-merge…) is refused before the person is asked.
    await checkChangeRuns(store, action, runIds);
    const question = `Merge these changes into your working tree (nothing is staged)?\n${lines.join("\n")}`;
    if (!(await ctx.ui.confirm("Apply changes?", question))) return print(title, [...lines, "Nothing applied."]);
  }
  // Another process holding the repository lock for long is named while this waits, as `flow runs apply` names it on stderr.
  const answers = await changeRuns(store, action, runIds, { onWaiting: (text) => print(title, [text]) });
  return print(title, [...lines, ...formatChangeAnswers(answers, action).split("\n")]);
}
