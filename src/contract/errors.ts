/**
 * The closed set of error codes of contract v1. Every `ok: false` envelope carries exactly one of
 * these; a code outside this set is a bug. The meanings are the contract's own.
 */
export const ERROR_CODES = {
  configuration_invalid: "Flow or role configuration is unusable; found before launch.",
  harness_unavailable: "The selected harness is absent or unfit (its preflight failed); found before launch.",
  selection_invalid:
    "Unknown role, subagent type, harness, saved workflow, help topic, help tool or help harness; found before launch.",
  model_unavailable: "The requested model cannot be used; found before launch.",
  context_invalid: "The context request cannot be satisfied; found before launch.",
  session_closed: "The owning session closed before the run registered.",
  failed: "Terminal outcome of the run this receipt is about: it failed.",
  cancelled: "Terminal outcome of the run this receipt is about: it was cancelled.",
  timed_out: "Terminal outcome of the run this receipt is about: it ran out of time.",
  request_invalid:
    "Malformed or contradictory parameters (bad ID, both selectors, target count, view, source count).",
  run_unavailable:
    "Unknown run, a run of another session or project, or one pruned by retention (deliberately indistinguishable); also an unreadable journal in this project.",
  run_not_live:
    "The run is in this session but has no live owner and its evidence is not terminal: a wait cannot complete and a cancel cannot be confirmed.",
  cursor_invalid: "A malformed cursor, one from a different run, view, scope or target set, or one pointing past the end of its view or target list.",
  cursor_stale: "The evidence changed while paging, or the cursor predates the page format. Restart without a cursor.",
  page_too_small:
    "limitBytes cannot hold one whole batch entry, or, for a single page, the next character (a UTF-8 character takes up to 4 bytes). Ask again with a larger limitBytes.",
  session_unavailable: "Supervision needs a persisted originating session.",
  script_invalid: "Workflow parse, meta or apiVersion failure. Nothing was launched.",
  storage_unavailable: "Workflow script or journal persistence failed before registration.",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CODES, value);
}

/**
 * A typed, expected failure: tools turn it into an `ok: false` envelope instead of throwing
 * it to Pi. Anything else that is thrown stays a thrown error (the contract's "still thrown").
 */
export class FlowError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = "FlowError";
    this.code = code;
  }
}
