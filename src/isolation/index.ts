// Worktree isolation (tool-calling contract 14.3): the one entry other folders import.
export { isolationCwd, isolationRepository, isolationWorktree, startIsolation, finishIsolation, type PendingIsolation } from "./child-isolation.ts";
export { resolveKeptChangesMax, type FlowIsolationSettingsInput } from "./kept-settings.ts";
export type { KeptChangesMax } from "./kept-size.ts";
export { openRepository, type Repository } from "./repository.ts";
export { applyChanges, type ApplyOutcome } from "./apply.ts";
export { changesRef, dropChanges, type ChangeStats } from "./changes.ts";
export { readChangeRecord, writeChangeRecord, type ChangeRecord, type ChangeState } from "./change-record.ts";
export { cleanupIsolation, type CleanupReport } from "./cleanup.ts";
export { worktreeChanges } from "./worktree-patch.ts";
