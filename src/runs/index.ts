/**
 * Durable runs: the one module the tools ask about runs. See docs/runs.md.
 */
export {
  openRunStore,
  RunStore,
  type CancelPayload,
  type InspectInput,
  type PageOptions,
  type RunStoreOptions,
} from "./store.ts";
export {
  RunWriter,
  type CreateRunInput,
  type SettleInput,
  type SettleResult,
  type WritePoint,
  type WriterHooks,
} from "./write/writer.ts";
export { RunRegistry, processRegistry, type CancelResult, type LiveEntry, type MemoryFinal } from "./registry.ts";
export { FLOW_SESSION_FILE, resolveFlowHome, projectKey, projectSessionKeys, runFiles, sessionKey, sessionsDir, type RunFiles, type RunScope } from "./home.ts";
export { assertRunId, isRunId, newRunId, runKindOf, RUN_ID_PATTERN, type RunKind } from "./ids.ts";
export { redactedJson, redactText, redactValue, redactValueUnder, rememberSharedHead, REDACTED } from "./redact/index.ts";
export { redactGitPatch, type RedactedPatch } from "./redact/git-patch.ts";
export { shownUrl } from "./redact/shown-url.ts";
export { PrintedSecretResults } from "./redact/printed-results.ts";
export { printable, quoteGiven, QUOTE_MAX_CHARS, stripControls } from "./controls.ts";
export { EXCERPT_MAX_CHARS, sourceExcerpt } from "./source-excerpt.ts";
export { atomicWriteFile, errorCode, readEvidenceText, TMP_PREFIX } from "./fsio.ts";
export { groupCommit } from "./write/group-commit.ts";
export { assertReplaceableTarget, createStagedFile, stagingPathFor } from "./write/staged-file.ts";
export { ARGS_MAX_BYTES, CASSETTE_MAX_BYTES, formatBytes, readUserFile, SCRIPT_MAX_BYTES } from "./user-file.ts";
export { deliver, jsonBytes, INLINE_LIMIT_BYTES, type Delivery } from "./read/delivery.ts";
export { buildView, formatListRowText, formatRunText, formatRunTextFor, NOT_SUPERVISED, outputWarnings } from "./read/view.ts";
export {
  formatBatchText,
  DEFAULT_PAGE_BYTES,
  MAX_PAGE_BYTES,
  MAX_BATCH_TARGETS,
  type BatchPayload,
  type RunViewName,
  type SinglePayload,
} from "./read/inspect.ts";
export { DEFAULT_LIST_INLINE_BYTES, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, type ListPayload } from "./read/list.ts";
export {
  DEFAULT_RETENTION,
  prune,
  resolveRetention,
  type PruneReport,
  type RetentionPolicy,
  type RetentionSettings,
} from "./retention.ts";
export { ownerAlive, sessionClosed, sessionIsOpen, sessionOpened } from "./live-sessions.ts";
export { ownIdentity, type ProcessIdentity } from "./process-identity.ts";
export { classifyJournalText, type JournalReport } from "./journal/integrity.ts";
export type { WorkflowCall } from "./read/calls.ts";
export { readLaunch } from "./journal/journal-ends.ts";
export type { BodyLine, ChildCounts, ChildLine, EventLine, RunError, StoreLine, TaskIdentity, Usage } from "./journal/journal.ts";
export type { DiagnosticEntry, DiagnosticLevel } from "./journal/evidence.ts";
export { checkPrivateTarget, writePrivately } from "./private-write.ts";
