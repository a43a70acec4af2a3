// What the child launcher asks of worktree isolation: a check before launch, a worktree while the
// child runs, and its changes kept as evidence (ref, counts, redacted patch) when it settles.
import { FlowError } from "../contract/errors.ts";
import type { RunFiles } from "../runs/index.ts";
import { patchText, readChanges, type ChangeStats } from "./changes.ts";
import { writeChangeRecord, writePatch } from "./change-record.ts";
import { openRepository, type Repository } from "./repository.ts";
import { createIsolation, settleIsolation, type Isolation } from "./worktree.ts";

/**
 * The repository a child asking for `isolation: "worktree"` (itself or through its profile) works
 * on, or undefined when it does not ask; configuration_invalid when `cwd` is not in a working tree.
 */
export function isolationRepository(asked: unknown, profileAsked: "worktree" | undefined, cwd: string): Repository | undefined {
  if (asked !== undefined && asked !== "worktree") throw new FlowError("request_invalid", 'isolation must be "worktree".');
  return (asked ?? profileAsked) === "worktree" ? openRepository(cwd) : undefined;
}

/** Starts making the child's worktree now (the base is the tree as it is at launch). */
export function startIsolation(repo: Repository, runId: string, home: string): Promise<Isolation> {
  const making = createIsolation(repo, runId, home);
  making.catch(() => undefined); // the child's run awaits it and fails with its error
  return making;
}

/**
 * The child settled: keeps its changes (ref, counts and redacted patch beside its evidence in
 * `runDir`) and removes its worktree. Undefined when it changed nothing or never got a worktree.
 */
export async function finishIsolation(
  making: Promise<Isolation>,
  files: RunFiles,
  home: string,
  evidence: { appendDiagnostic(entry: { level: "warn"; code: string; message: string }): void },
): Promise<ChangeStats | undefined> {
  try {
    return await keepChanges(making, files, home);
  } catch (error) {
    // The run's result stands; only the changes could not be kept, and its diagnostics say why.
    evidence.appendDiagnostic({ level: "warn", code: "changes_unavailable", message: `the child's changes could not be kept: ${(error as Error).message}` });
    return undefined;
  }
}

async function keepChanges(making: Promise<Isolation>, files: RunFiles, home: string): Promise<ChangeStats | undefined> {
  let isolation: Isolation;
  try {
    isolation = await making;
  } catch {
    return undefined; // no worktree was made; the run's error says why
  }
  const stats = await settleIsolation(isolation, home);
  if (!stats) return undefined;
  const kept = await readChanges(isolation.repo.root, isolation.runId);
  if (kept) await writePatch(files, await patchText(isolation.repo.root, kept.base, kept.commit));
  await writeChangeRecord(files, { ...stats, state: "kept", root: isolation.repo.root });
  return stats;
}
