// `flow runs apply|discard <runId>...`: a worktree run's kept changes land on the working tree
// (3-way, all or nothing per run, in the order given) or are dropped, from the shell.
import { resolve } from "node:path";
import { changeRuns, formatChangeAnswers, type ChangeAction, type ChangeAnswer } from "../isolation/apply-runs.ts";
import { parseCommand, stringFlag } from "./args.ts";
import { EXIT } from "./exit.ts";
import { storeOfRun } from "./project-runs.ts";
import { RUNS_USAGE } from "./usage.ts";

/** Exit 0 when every run applied (or had nothing to apply), 1 when one conflicted. */
export async function changesCommand(action: ChangeAction, argv: readonly string[]): Promise<number> {
  const parsed = parseCommand(argv, { cwd: { type: "string" } }, { min: 1, max: 100, missing: `the <runId>s to ${action}` }, RUNS_USAGE);
  const cwd = resolve(stringFlag(parsed, "cwd") ?? ".");
  const stores = parsed.positionals.map((runId) => storeOfRun(cwd, runId)); // every target found before any changes
  const answers: ChangeAnswer[] = [];
  for (const [at, runId] of parsed.positionals.entries()) answers.push(...(await changeRuns(stores[at]!, action, [runId])));
  process.stdout.write(`${formatChangeAnswers(answers)}\n`);
  return answers.some((answer) => answer.status === "conflict") ? EXIT.failed : EXIT.succeeded;
}
