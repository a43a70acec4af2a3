import type { Static } from "@sinclair/typebox";
import { FlowError } from "../../contract/errors.ts";
import type { RunView } from "../../contract/run-schema.ts";
import type { ListPayloadSchema } from "../../contract/runs-schema.ts";
import { decodeListCursor, encodeCursor, type ListCursor } from "./cursor.ts";
import { resolveFacts, type FactsContext } from "./facts.ts";
import { runsDir } from "../home.ts";
import type { RunKind } from "../ids.ts";
import { containsRunId, insertionPoint, savedRunIds } from "./run-index.ts";
import { assertLimitBytes, DEFAULT_PAGE_BYTES } from "./inspect.ts";
import { buildView, type InlineBudget } from "./view.ts";

export type ListPayload = Static<typeof ListPayloadSchema>;

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 500;

interface StreamPage {
  rows: RunView[];
  next?: string;
}

/**
 * One stream (agent runs or workflows). Stage 1 serves live runs that have no saved evidence yet,
 * newest first; its cursor bookmarks the last one served, so a run saved between pages is never
 * skipped (it may appear twice: live, then from its record). Stage 2 serves saved runs newest
 * first; its cursor bookmarks the last ID served, so runs started after the listing reached its
 * saved rows wait for the next fresh listing.
 */
function listStream(
  ctx: FactsContext,
  kind: RunKind,
  limit: number,
  cursor: ListCursor | undefined,
  budget: InlineBudget | undefined,
): StreamPage {
  // Saved IDs come from the in-memory index (run-index.ts): no directory scan, no sort per call.
  const saved = savedRunIds(runsDir(ctx.scope), kind);
  const registered = ctx.registry.entries(ctx.scopeToken, kind).reverse();
  const rows: RunView[] = [];
  const cursorFor = (st: "live" | "saved", a: string) => encodeCursor({ k: "list", s: ctx.scopeToken, n: kind, st, a });

  if (!cursor || cursor.st === "live") {
    let from = 0;
    if (cursor) {
      const bookmark = cursor.a;
      const at = registered.findIndex((entry) => entry.runId === bookmark);
      if (at < 0)
        throw new FlowError(
          "cursor_stale",
          "The run this list cursor continues from has left the live registry. Restart without a cursor.",
        );
      from = at + 1;
    }
    const unsaved = registered.slice(from).filter((entry) => entry.status !== "settled" && !containsRunId(saved, entry.runId));
    for (const entry of unsaved) {
      if (rows.length === limit) return { rows, next: cursorFor("live", rows[rows.length - 1]?.runId ?? entry.runId) };
      rows.push(buildView(resolveFacts(ctx, entry.runId), budget));
    }
    cursor = undefined;
  }

  const after = cursor?.a;
  let last: string | undefined;
  let from = after === undefined ? 0 : insertionPoint(saved, after);
  if (after !== undefined && saved[from] === after) from++; // resume strictly after the bookmark
  for (let at = from; at < saved.length; at++) {
    const runId = saved[at]!;
    if (rows.length === limit) {
      // Full before any saved row: bookmark the last live row, so the next page starts saved rows afresh.
      const bookmark = last ? cursorFor("saved", last) : cursorFor("live", rows[rows.length - 1]?.runId ?? runId);
      return { rows, next: bookmark };
    }
    try {
      rows.push(buildView(resolveFacts(ctx, runId), budget));
    } catch (error) {
      // A directory with nothing readable in it (a create that died before its start line) is not a run.
      if (!(error instanceof FlowError && error.code === "run_unavailable")) throw error;
    }
    last = runId;
  }
  return { rows };
}

export interface ListOptions {
  limit?: number;
  cursor?: string;
  workflowCursor?: string;
  /**
   * What each stream's inline values may spend (UTF-8 bytes of their JSON), `limitBytes` of the
   * tool; unbounded when absent, for pi-flow's own readers that walk every run.
   */
  inlineBytes?: number;
}

/** The inline budget of each stream of an `external_runs` list page when the call names none. */
export const DEFAULT_LIST_INLINE_BYTES = DEFAULT_PAGE_BYTES * 2;

export function listRuns(ctx: FactsContext, opts: ListOptions = {}): ListPayload {
  const limit = opts.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new FlowError("request_invalid", `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`);
  }
  const inlineBytes = opts.inlineBytes === undefined ? undefined : assertLimitBytes(opts.inlineBytes, DEFAULT_LIST_INLINE_BYTES);
  const runCursor =
    opts.cursor === undefined ? undefined : decodeListCursor(opts.cursor, { scope: ctx.scopeToken, stream: "agent" });
  const wfCursor =
    opts.workflowCursor === undefined
      ? undefined
      : decodeListCursor(opts.workflowCursor, { scope: ctx.scopeToken, stream: "workflow" });
  const budget = () => (inlineBytes === undefined ? undefined : { left: inlineBytes });
  const runs = listStream(ctx, "agent", limit, runCursor, budget());
  const workflows = listStream(ctx, "workflow", limit, wfCursor, budget());
  const payload: ListPayload = { runs: runs.rows, workflows: workflows.rows };
  if (runs.next) payload.nextCursor = runs.next;
  if (workflows.next) payload.nextWorkflowCursor = workflows.next;
  return payload;
}
