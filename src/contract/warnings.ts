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
  stubbed: "Children were answered by the stub harness: no model said those answers.",
  changes_need_review:
    "An apply wrote files that make tools run code or reach out of the working tree (hooks, .envrc, CI workflows, changed npm scripts, links out of the tree…): data.results[].review names them; read them before running anything.",
} as const;
