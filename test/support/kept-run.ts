// A finished agent run whose worktree child wrote some files: its changes kept on a real ref, as the
// child launcher keeps them, for tests of apply, discard and how runs show them.
import { openRepository } from "../../src/isolation/repository.ts";
import { writeChangeRecord } from "../../src/isolation/change-record.ts";
import { createIsolation, settleIsolation } from "../../src/isolation/worktree.ts";
import { runFiles, type RunStore } from "../../src/runs/index.ts";
import { writeIn } from "./git-repo.ts";

/** A finished agent run of `store` whose worktree child wrote `files` (its changes kept, as the launcher keeps them). */
export async function keptRun(store: RunStore, root: string, files: Record<string, string | Buffer>): Promise<string> {
  const run = store.create({ kind: "agent", task: { description: "writes" }, background: false });
  const isolation = await createIsolation(await openRepository(root), run.runId, store.scope.home);
  writeIn(isolation.path, files);
  const stats = await settleIsolation(isolation, store.scope.home);
  await writeChangeRecord(runFiles(store.scope, run.runId), { state: "kept", root, ...stats! });
  run.settle({ outcome: "succeeded", value: "done", changes: stats! });
  return run.runId;
}
