/**
 * The warnings a receipt's `warnings` may carry, each with what it tells the caller. The v1 contract
 * names output_redacted and handled_child_failures; the rest are pi-flow's additions
 * (docs/contract.md, "Warnings"). external_help's errors topic lists them, so a model that meets one
 * can look it up.
 */
export const RECEIPT_WARNINGS = {
  output_redacted: "Secret redaction changed an inlined value (best-effort pattern redaction, not a guarantee).",
  handled_child_failures: "The workflow succeeded after catching failed agent() calls: check that its result accounts for them.",
  evidence_incomplete:
    "The run's result stands, but part of its evidence could not be saved; it is served from memory while this process holds it.",
  tools_withheld: "A child ran without tools its role asks for, because this session does not hold them; its launch view lists them.",
  stubbed: "Children were answered by the stub harness: no model said those answers. On an external_runs wait: a run it returns was (its text names them).",
  git_controls_changed:
    "While a worktree child ran, the repository's git config, hooks or attributes changed (every worktree shares them, so a child's bash can change them): git runs the programs they name, for your checkout too. The run's diagnostics name the files; read them before your next git command there.",
  child_moved_refs:
    "A worktree child moved branches or tags of yours onto commits it made (every worktree shares them): they were put back where they were, and the child's tips kept on refs/pi-flow-moved/<runId>/…; the run's diagnostics name each.",
  refs_deleted:
    "Branches or tags of the repository were deleted while a worktree child ran, by it or another process: nothing is put back; the run's diagnostics name each with the commit it held.",
  stash_repaired:
    "The repository's stash list (every worktree shares one) changed while a worktree child ran: your entries it took were put back, its own taken off; the run's diagnostics name each entry by commit.",
  worktree_replaced:
    "A worktree child replaced its worktree folder (or a folder on the way to it) with a link out of it, or with another folder: its changes were not kept (git would have taken that folder's files for its own), and nothing was removed there or through the link; the run's diagnostics say where it led, which the child could write through.",
  changes_too_large:
    "A worktree child left more in its worktree than pi-flow keeps of one child (by default 1 GiB, or 100,000 new or changed files; flow.isolation.maxKeptBytes and maxKeptFiles raise it): none of its changes were kept. Its worktree is left as it was until a session start after this process has ended, to copy what you need from: the run's diagnostics give its path and name the largest folders and files it left.",
  changes_need_review:
    "An apply wrote files that make tools run code or reach out of the working tree (hooks, .envrc, CI workflows, changed npm scripts, links out of the tree…): data.results[].review names them; read them before running anything.",
} as const;

/** The receipt warning of a worktree child during whose run the repository's git config, hooks or attributes changed. */
export const GIT_CONTROLS_CHANGED = "git_controls_changed";

/**
 * The warnings a worktree child's settle raises about what every worktree shares (git's config and
 * hooks, branches and tags, the stash) and about its worktree: a workflow's receipt carries those of its children.
 */
export const REPOSITORY_WARNINGS = [GIT_CONTROLS_CHANGED, "child_moved_refs", "refs_deleted", "stash_repaired", "worktree_replaced", "changes_too_large"] as const;
export type RepositoryWarning = (typeof REPOSITORY_WARNINGS)[number];

/** The receipt's text lines for the repository warnings among `warnings` (delegate and workflow alike). */
export const repositoryWarningNotes = (warnings: readonly string[]): string =>
  REPOSITORY_WARNINGS.filter((warning) => warnings.includes(warning))
    .map((warning) => `\nWarning (${warning}): ${RECEIPT_WARNINGS[warning]}`)
    .join("");
