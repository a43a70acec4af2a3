// `flow runs apply|discard <runId>...`: a worktree run's kept changes land on the working tree
// (3-way, all or nothing per run, in the order given) or are dropped, from the shell.
import { resolve } from "node:path";
import { changeTargets, formatChangeAnswers, targetIds, type ChangeAction } from "../isolation/apply-runs.ts";
import { parseCommand, stringFlag } from "./args.ts";
import { EXIT } from "./exit.ts";
import { storeOfRun } from "./project-runs.ts";
import { RUNS_USAGE } from "./usage.ts";

/** Exit 0 when every run applied (or had nothing to apply), 1 when one conflicted. */
export async function changesCommand(action: ChangeAction, argv: readonly string[]): Promise<number> {
  const parsed = parseCommand(argv, { cwd: { type: "string" } }, { min: 1, max: 100, missing: `the <runId>s to ${action}` }, RUNS_USAGE);
  const cwd = resolve(stringFlag(parsed, "cwd") ?? ".");
  // Every target is found and checked before any is touched: one unfinished or unknown run refuses the whole call.
  const targets = targetIds(parsed.positionals).map((runId) => ({ runs: storeOfRun(cwd, runId), runId }));
  // A lock another process holds for long is named on stderr while this waits (see LOCK_PATIENCE_MS).
  const answers = await changeTargets(targets, action, { onWaiting: (text) => process.stderr.write(`${text}\n`) });
  process.stdout.write(`${formatChangeAnswers(answers, action)}\n`);
  return answers.some((answer) => answer.status === "conflict") ? EXIT.failed : EXIT.succeeded;
}
